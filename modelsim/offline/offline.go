// Package offline writes the private home an agent CLI (Claude Code, Codex,
// Gemini CLI) needs to run unattended against a model-sim endpoint on
// loopback, with no account and no network, and returns the environment that
// points the CLI there.
//
// API, one call per CLI, all taking the same Config:
//
//		env, err := offline.Claude(offline.Config{Home: dir, BaseURL: srv.URL(), Trusted: []string{project}})
//		cmd.Env = env.Apply(os.Environ())
//
//	  - Claude: writes Home/.claude.json (hasCompletedOnboarding,
//	    projects.<dir>.hasTrustDialogAccepted, customApiKeyResponses.approved
//	    holding the key's last 20 characters) and Home/.claude/settings.json
//	    (skipDangerousModePermissionPrompt); sets HOME, ANTHROPIC_BASE_URL,
//	    ANTHROPIC_API_KEY, IS_SANDBOX=1 (root may then use
//	    --dangerously-skip-permissions), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1,
//	    DISABLE_AUTOUPDATER=1. With Config.Subscriber it sets
//	    CLAUDE_CODE_OAUTH_TOKEN instead of the key (a subscriber's sign-in).
//	  - Codex: writes Home/.codex/config.toml with model_provider and
//	    [model_providers.model-sim] (base_url BaseURL+"/v1", wire_api =
//	    "responses", env_key) and trusted [projects."DIR"]; sets HOME,
//	    CODEX_HOME and the key variable.
//	  - Gemini: writes Home/.gemini/settings.json
//	    (security.auth.selectedType = "gemini-api-key") and
//	    Home/.gemini/trustedFolders.json; sets HOME, GOOGLE_GEMINI_BASE_URL,
//	    GEMINI_API_KEY.
//	  - Copilot: writes Home/.copilot/config.json (trustedFolders); sets
//	    HOME, COPILOT_OFFLINE=true, COPILOT_PROVIDER_BASE_URL (BaseURL+"/v1"),
//	    COPILOT_PROVIDER_WIRE_API=responses, COPILOT_PROVIDER_API_KEY,
//	    COPILOT_MODEL, and XDG_CACHE_HOME (the user's, where it unpacks itself).
//	  - OpenCode: writes Home/.config/opencode/opencode.json (a provider of
//	    its own on the Anthropic endpoint, BaseURL+"/v1", as its model); sets
//	    HOME, OPENCODE_DISABLE_AUTOUPDATE, OPENCODE_DISABLE_MODELS_FETCH.
//
// Config.Model, when set, is the model each CLI asks for (ANTHROPIC_MODEL,
// config.toml model, settings.json model.name). Each dialog a first run meets
// is settled unless Config.Leave names it, which is how a test reproduces that
// dialog: all four for Claude Code; TrustFolder for Codex (no [projects] entry)
// and Gemini CLI (an empty trustedFolders.json: `gemini -p` then exits 55). Env.Apply also drops variables that
// would send the CLI elsewhere (another account's token, a cloud provider).
package offline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// APIKey is the key handed to every CLI; model-sim accepts any.
const APIKey = "sk-model-sim-offline-0123456789abcdefghij" //nolint:gosec // G101: a placeholder, not a credential

// OAuthToken is the subscriber token handed to Claude Code (Config.Subscriber).
const OAuthToken = "sk-ant-oat01-model-sim-offline-0123456789abcdefghij" //nolint:gosec // G101: a placeholder, not a credential

// Config says where the CLI's private home is and what it talks to.
type Config struct {
	// Home is the private HOME (created if missing). Never the user's own.
	Home string
	// BaseURL is model-sim's base URL (http://127.0.0.1:PORT).
	BaseURL string
	// Trusted are project folders the CLI trusts (absolute paths).
	Trusted []string
	// Model is the model name the CLI asks for; "" keeps the CLI's default.
	Model string
	// Leave keeps these first-run dialogs in place.
	Leave Dialogs
	// Subscriber signs Claude Code in as a subscriber (an OAuth token,
	// CLAUDE_CODE_OAUTH_TOKEN, instead of an API key): the sign-in whose
	// usage limit shows its window and reset time.
	Subscriber bool
}

// Dialogs a first run can meet.
type Dialogs struct {
	// TrustFolder: Trusted folders are not marked trusted.
	TrustFolder bool
	// Onboarding: Claude's first-run onboarding is not marked done.
	Onboarding bool
	// APIKey: Claude's "use this API key?" answer is not recorded.
	APIKey bool
	// BypassPermissions: Claude's bypass-permissions warning is not accepted.
	BypassPermissions bool
	// AuthMethod: Gemini is given no sign-in (no auth type, no key).
	AuthMethod bool
}

// Env is what a CLI's environment needs: variables to set and to drop.
type Env struct {
	Set   map[string]string
	Unset []string
}

// Apply returns base without Unset and with Set (Set wins), sorted.
func (e Env) Apply(base []string) []string {
	drop := map[string]bool{}
	for _, k := range e.Unset {
		drop[k] = true
	}
	for k := range e.Set {
		drop[k] = true
	}
	out := make([]string, 0, len(base)+len(e.Set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	for k, v := range e.Set {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Pairs lists Set as sorted KEY=VALUE pairs.
func (e Env) Pairs() []string { return Env{Set: e.Set}.Apply(nil) }

func (c Config) check() error {
	if c.Home == "" || !filepath.IsAbs(c.Home) {
		return fmt.Errorf("offline home %q: want an absolute path", c.Home)
	}
	if c.BaseURL == "" {
		return fmt.Errorf("offline home: no model-sim base URL")
	}
	for _, d := range c.Trusted {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("trusted folder %q: want an absolute path", d)
		}
	}
	return os.MkdirAll(c.Home, 0o700)
}

// trusted lists the Trusted folders with symlinks resolved too, since a CLI
// may key its trust by either form (macOS /tmp, a symlinked checkout).
func (c Config) trusted() []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range c.Trusted {
		for _, p := range []string{filepath.Clean(d), resolved(d)} {
			if p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// writeJSON writes v as indented JSON, 0600, creating the directory 0700.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(data, '\n'))
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// homes are the home writers by agent CLI name.
var homes = map[string]func(Config) (Env, error){"claude": Claude, "codex": Codex, "gemini": Gemini, "copilot": Copilot,
	"opencode": OpenCode}

// For returns the home writer of an agent CLI by its name ("claude",
// "codex", "gemini", "copilot", "opencode"); ok is false for any other name.
func For(agent string) (write func(Config) (Env, error), ok bool) {
	write, ok = homes[agent]
	return write, ok
}

// Agents lists the agent CLIs a home can be written for, sorted.
func Agents() []string {
	out := make([]string, 0, len(homes))
	for a := range homes {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}
