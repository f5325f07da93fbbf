package child

import (
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/tomledit"
	"github.com/story-automator/story-automator/sessionstate"
)

// Variables every child gets.
const (
	EnvChild    = sessionstate.EnvChild
	EnvSession  = sessionstate.EnvSession
	EnvStateDir = sessionstate.EnvStateDir
	EnvAgent    = "STORY_AUTOMATOR_AGENT"
	EnvStep     = "STORY_AUTOMATOR_STEP"
	EnvStory    = "STORY_AUTOMATOR_STORY"
	EnvEpic     = "STORY_AUTOMATOR_EPIC"
	// EnvWorkDir is the folder a child works in when it is not the project
	// root: the story's git worktree.
	EnvWorkDir = "STORY_AUTOMATOR_WORKDIR"
)

// Variables a run's orchestrator adds for every child on top of the
// spawner's: which attempt, review cycle and agent role (primary or
// fallback) it is, and the run it belongs to.
const (
	EnvAttempt = "STORY_AUTOMATOR_ATTEMPT"
	EnvCycle   = "STORY_AUTOMATOR_CYCLE"
	EnvRole    = "STORY_AUTOMATOR_ROLE"
	EnvRunID   = "STORY_AUTOMATOR_RUN_ID"
)

// AllowedVars are the variables of the spawner's environment every child
// starts from, whatever its agent ("X_*" is every name that starts with
// X_): where things are and who runs them, the locale and terminal, the
// temp dir, proxies and the certificates they need, the user's tool
// directories, the git identity, and this tool's own. Everything else (a
// notification webhook's secret, a cloud key, SSH_AUTH_SOCK) stays behind
// unless the agent's profile (agent.Profile.PassVars) or workflow.yaml's
// env.pass names it. docs/sandbox.md lists them.
func AllowedVars() []string {
	return []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL",
		"LANG", "LANGUAGE", "LC_*", "TZ",
		"TERM", "COLORTERM", "NO_COLOR",
		"TMPDIR",
		"http_proxy", "https_proxy", "no_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
		"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
		"GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "GOPRIVATE", "GONOSUMDB", "GONOPROXY",
		"CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "VIRTUAL_ENV", "NVM_DIR",
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
		"GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM",
		"STORY_AUTOMATOR_*",
	}
}

// EnvPolicy is which variables of the spawner's environment a child gets
// beyond AllowedVars and its agent's PassVars: Pass adds names
// (workflow.yaml's env.pass); Deny names are never passed, even when
// allowed (the variables notify names).
type EnvPolicy struct {
	Pass, Deny []string
}

// clearedVars must not leak from the spawner into a child: every agent's
// session variables (its nesting guard and session id, Profile.SessionEnv:
// a child is never the run's owner), a shell startup file, and the tmux
// client of the spawner.
func clearedVars() []string {
	return append(agent.SessionVars(), "BASH_ENV", "ENV", "TMUX", "TMUX_PANE")
}

// matches reports whether name is one of pats ("X_*" matches a prefix).
func matches(name string, pats []string) bool {
	for _, p := range pats {
		if pre, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, pre) {
				return true
			}
		} else if name == p {
			return true
		}
	}
	return false
}

// ChildEnv is what a child of prof starts from: the variables of base that
// AllowedVars, prof's PassVars (with the key variable its config selects)
// or pol.Pass name, less pol.Deny and the cleared variables, with set
// applied on top (set wins), sorted for a stable spec file.
func ChildEnv(base []string, prof agent.Profile, pol EnvPolicy, set map[string]string) []string {
	vals := envPairs(base)
	allow := append(append(AllowedVars(), prof.PassVars()...), pol.Pass...)
	for _, q := range prof.PassProfiles() {
		if k := ProviderKey(q, func(k string) string { return vals[k] }); k != "" {
			allow = append(allow, k)
		}
	}
	for k := range vals {
		if !matches(k, allow) || slices.Contains(pol.Deny, k) {
			delete(vals, k)
		}
	}
	for _, k := range clearedVars() {
		delete(vals, k)
	}
	for k, v := range set {
		vals[k] = v
	}
	return envList(vals)
}

// WithVars is env with set applied on top (set wins), sorted.
func WithVars(env []string, set map[string]string) []string {
	vals := envPairs(env)
	for k, v := range set {
		vals[k] = v
	}
	return envList(vals)
}

func envPairs(env []string) map[string]string {
	vals := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		vals[k] = v
	}
	return vals
}

func envList(vals map[string]string) []string {
	out := make([]string, 0, len(vals))
	for k, v := range vals {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// ProviderKey is the variable that holds the key of the model provider the
// CLI's config selects (agent.AuthProviderTOML: config.toml's
// model_provider with its env_key), if any.
func ProviderKey(p agent.Profile, getenv func(string) string) string {
	if p.AuthConfig != agent.AuthProviderTOML {
		return ""
	}
	doc, err := os.ReadFile(p.StatePath("config.toml", getenv))
	if err != nil {
		return ""
	}
	id, _, _ := tomledit.Get(doc, tomledit.Path{"model_provider"})
	name, ok := id.(string)
	if !ok {
		return ""
	}
	v, _, _ := tomledit.Get(doc, tomledit.Path{"model_providers", name, "env_key"})
	key, _ := v.(string)
	return key
}
