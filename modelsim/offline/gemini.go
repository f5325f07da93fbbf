package offline

import "path/filepath"

// geminiUnset would take Gemini CLI to another account, home or trust file.
var geminiUnset = []string{"GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_CLOUD_PROJECT",
	"GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_ACCESS_TOKEN", "GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
	"GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_MODEL"}

// Gemini writes Gemini CLI's private home (Home/.gemini) and returns its environment.
func Gemini(c Config) (Env, error) {
	if err := c.check(); err != nil {
		return Env{}, err
	}
	dir := filepath.Join(c.Home, ".gemini")
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	}
	if c.Leave.AuthMethod {
		delete(settings, "security")
	}
	if c.Model != "" {
		settings["model"] = map[string]any{"name": c.Model}
	}
	if err := writeJSON(filepath.Join(dir, "settings.json"), settings); err != nil {
		return Env{}, err
	}
	trusted := map[string]string{}
	if !c.Leave.TrustFolder {
		for _, d := range c.trusted() {
			trusted[d] = "TRUST_FOLDER"
		}
	}
	if err := writeJSON(filepath.Join(dir, "trustedFolders.json"), trusted); err != nil {
		return Env{}, err
	}
	env := Env{Set: map[string]string{"HOME": c.Home, "GOOGLE_GEMINI_BASE_URL": c.BaseURL, "GEMINI_API_KEY": APIKey},
		Unset: geminiUnset}
	if c.Leave.AuthMethod {
		delete(env.Set, "GEMINI_API_KEY")
		env.Unset = append(env.Unset, "GEMINI_API_KEY")
	}
	return env, nil
}
