package offline

import (
	"os"
	"path/filepath"
)

// CopilotModel is the model Copilot CLI asks for when Config.Model is
// empty: with a provider of its own it needs one named.
const CopilotModel = "gpt-5.4"

// copilotUnset would take Copilot CLI to a GitHub account, another home or
// another provider, or mark it as running inside a session.
var copilotUnset = []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_HOME", "COPILOT_ALLOW_ALL",
	"COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_BEARER_TOKEN", "COPILOT_AGENT_SESSION_ID", "COPILOT_CLI"}

// Copilot writes GitHub Copilot CLI's private home (Home/.copilot/config.json
// with the trusted folders) and returns its environment: offline mode with
// model-sim as its provider (the Responses wire API). XDG_CACHE_HOME stays
// the user's cache folder, where the CLI unpacks its program (235 MB) on its
// first start, so every private home shares one copy.
func Copilot(c Config) (Env, error) {
	if err := c.check(); err != nil {
		return Env{}, err
	}
	trusted := []string{}
	if !c.Leave.TrustFolder {
		trusted = c.trusted()
	}
	config := map[string]any{"trustedFolders": trusted, "banner": "never"}
	if err := writeJSON(filepath.Join(c.Home, ".copilot", "config.json"), config); err != nil {
		return Env{}, err
	}
	model := c.Model
	if model == "" {
		model = CopilotModel
	}
	env := Env{Set: map[string]string{"HOME": c.Home, "COPILOT_OFFLINE": "true",
		"COPILOT_PROVIDER_BASE_URL": c.BaseURL + "/v1", "COPILOT_PROVIDER_WIRE_API": "responses",
		"COPILOT_PROVIDER_API_KEY": APIKey, "COPILOT_MODEL": model}, Unset: copilotUnset}
	if cache, err := os.UserCacheDir(); err == nil {
		env.Set["XDG_CACHE_HOME"] = cache
	}
	return env, nil
}
