package offline

import "path/filepath"

// opencodeUnset would take OpenCode to another config, data folder or provider key.
var opencodeUnset = []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "OPENCODE_CONFIG",
	"OPENCODE_CONFIG_DIR", "OPENCODE_CONFIG_CONTENT", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY"}

// OpenCodeProvider is the provider OpenCode's offline config names, and
// OpenCodeModel its model unless Config.Model names another.
const (
	OpenCodeProvider = "sim"
	OpenCodeModel    = "model-sim"
)

// OpenCode writes OpenCode's private home: Home/.config/opencode/opencode.json
// with a provider of its own on model-sim's Anthropic Messages endpoint
// (@ai-sdk/anthropic, baseURL BaseURL+"/v1") as the default model, no
// autoupdate, no sharing; it sets HOME and turns off OpenCode's update
// check and its models.dev fetch. OpenCode asks to trust no folder.
func OpenCode(c Config) (Env, error) {
	if err := c.check(); err != nil {
		return Env{}, err
	}
	model := OpenCodeModel
	if c.Model != "" {
		model = c.Model
	}
	config := map[string]any{
		"autoupdate": false, "share": "disabled", "model": OpenCodeProvider + "/" + model,
		"provider": map[string]any{OpenCodeProvider: map[string]any{
			"npm": "@ai-sdk/anthropic", "name": "model-sim",
			"options": map[string]any{"baseURL": c.BaseURL + "/v1", "apiKey": APIKey},
			"models": map[string]any{model: map[string]any{"name": model, "tool_call": true,
				"limit": map[string]any{"context": 200000, "output": 32000}}},
		}},
	}
	if err := writeJSON(filepath.Join(c.Home, ".config", "opencode", "opencode.json"), config); err != nil {
		return Env{}, err
	}
	return Env{Set: map[string]string{"HOME": c.Home, "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"},
		Unset: opencodeUnset}, nil
}
