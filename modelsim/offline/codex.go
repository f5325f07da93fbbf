package offline

import (
	"fmt"
	"path/filepath"
	"strings"
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
	fmt.Fprintf(&b, "model_provider = %s\n", tomlString(CodexProvider))
	if c.Model != "" {
		fmt.Fprintf(&b, "model = %s\n", tomlString(c.Model))
	}
	b.WriteString("check_for_update_on_startup = false\n")
	fmt.Fprintf(&b, "\n[model_providers.%s]\nname = \"model-sim\"\nbase_url = %s\nwire_api = \"responses\"\nenv_key = %s\n",
		CodexProvider, tomlString(c.BaseURL+"/v1"), tomlString(CodexKeyVar))
	if !c.Leave.TrustFolder {
		for _, d := range c.trusted() {
			fmt.Fprintf(&b, "\n[projects.%s]\ntrust_level = \"trusted\"\n", tomlString(d))
		}
	}
	if err := writeFile(filepath.Join(codexHome, "config.toml"), []byte(b.String())); err != nil {
		return Env{}, err
	}
	return Env{Set: map[string]string{"HOME": c.Home, "CODEX_HOME": codexHome, CodexKeyVar: APIKey},
		Unset: codexUnset}, nil
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
