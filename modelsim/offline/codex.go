package offline

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/tomledit"
)

// CodexProvider is the model provider id the Codex home configures, and
// CodexKeyVar the variable that carries its key.
const (
	CodexProvider = "model-sim"
	CodexKeyVar   = "MODEL_SIM_API_KEY"
)

// codexUnset would take Codex to a real account.
var codexUnset = []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY", "CODEX_THREAD_ID"}

// Codex writes Codex's private home (Home/.codex, named by CODEX_HOME) and
// returns its environment.
func Codex(c Config) (Env, error) {
	if err := c.check(); err != nil {
		return Env{}, err
	}
	codexHome := filepath.Join(c.Home, ".codex")
	var b strings.Builder
	b.WriteString("# Written by story-automator for an offline run against model-sim.\n")
	fmt.Fprintf(&b, "model_provider = %s\n", tomledit.String(CodexProvider))
	if c.Model != "" {
		fmt.Fprintf(&b, "model = %s\n", tomledit.String(c.Model))
	}
	b.WriteString("check_for_update_on_startup = false\n")
	fmt.Fprintf(&b, "\n[model_providers.%s]\nname = \"model-sim\"\nbase_url = %s\nwire_api = \"responses\"\nenv_key = %s\n",
		CodexProvider, tomledit.String(c.BaseURL+"/v1"), tomledit.String(CodexKeyVar))
	if !c.Leave.TrustFolder {
		for _, d := range c.trusted() {
			fmt.Fprintf(&b, "\n[projects.%s]\ntrust_level = \"trusted\"\n", tomledit.String(d))
		}
	}
	if err := writeFile(filepath.Join(codexHome, "config.toml"), []byte(b.String())); err != nil {
		return Env{}, err
	}
	return Env{Set: map[string]string{"HOME": c.Home, "CODEX_HOME": codexHome, CodexKeyVar: APIKey},
		Unset: codexUnset}, nil
}
