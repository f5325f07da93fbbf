package offline

import "path/filepath"

// claudeUnset are variables that would take Claude Code to another account,
// provider or configuration directory.
var claudeUnset = []string{"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK",
	"CLAUDE_CODE_USE_VERTEX", "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"}

// Claude writes Claude Code's private home and returns its environment.
func Claude(c Config) (Env, error) {
	if err := c.check(); err != nil {
		return Env{}, err
	}
	state := map[string]any{"numStartups": 1, "autoUpdates": false}
	if !c.Leave.Onboarding {
		state["hasCompletedOnboarding"] = true
		state["theme"] = "dark"
	}
	if !c.Leave.APIKey {
		state["customApiKeyResponses"] = map[string]any{"approved": []string{APIKey[len(APIKey)-20:]}, "rejected": []string{}}
	}
	projects := map[string]any{}
	for _, d := range c.trusted() {
		projects[d] = map[string]any{"hasTrustDialogAccepted": !c.Leave.TrustFolder, "allowedTools": []string{}}
	}
	state["projects"] = projects
	if err := writeJSON(filepath.Join(c.Home, ".claude.json"), state); err != nil {
		return Env{}, err
	}
	settings := map[string]any{}
	if !c.Leave.BypassPermissions {
		settings["skipDangerousModePermissionPrompt"] = true
	}
	if err := writeJSON(filepath.Join(c.Home, ".claude", "settings.json"), settings); err != nil {
		return Env{}, err
	}
	set := map[string]string{"HOME": c.Home, "ANTHROPIC_BASE_URL": c.BaseURL, "ANTHROPIC_API_KEY": APIKey,
		"IS_SANDBOX": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
	unset := claudeUnset
	if c.Subscriber {
		delete(set, "ANTHROPIC_API_KEY")
		set["CLAUDE_CODE_OAUTH_TOKEN"] = OAuthToken
		unset = append(append([]string(nil), claudeUnset...), "ANTHROPIC_API_KEY")
	}
	if c.Model != "" {
		set["ANTHROPIC_MODEL"] = c.Model
	}
	return Env{Set: set, Unset: unset}, nil
}
