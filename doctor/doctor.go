// Package doctor checks that this machine can run stories with a real agent:
// tmux, each agent CLI and its version, auth, folder trust, hooks, and a
// one-turn rehearsal of a real child in tmux.
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/tomledit"
	"github.com/story-automator/story-automator/stophook/settings"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
)

// Status of one check.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail"
)

// Check is one line of the report: what was checked, how it went, and the
// one thing to do when it did not go well.
type Check struct {
	Name   string `json:"name"`
	Agent  string `json:"agent,omitempty"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Report is every check; OK is false when any failed.
type Report struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// Options say what to check and how.
type Options struct {
	Root    string
	Agents  []string
	Offline bool
	Getenv  func(string) string
	// Environ is the environment children get (the user's own).
	Environ []string
	// Hook is what `hooks install` would register (its command names this binary).
	Hook settings.Hook
	// Euid is the user the tool runs as (os.Geteuid()): some CLIs refuse root.
	Euid int
	// Codex lists the hooks the installed Codex sees (nil: its app-server).
	Codex settings.CodexLister
	// Rehearse runs one real turn of agent in tmux; nil skips the rehearsal.
	Rehearse func(ctx context.Context, agent string) Check
}

// Run makes every check, in order.
func Run(ctx context.Context, o Options) Report {
	var checks []Check
	checks = append(checks, checkTmux(ctx))
	for _, a := range o.Agents {
		found := checkCLI(ctx, a, o.Environ)
		checks = append(checks, found)
		if found.Status == Fail {
			continue
		}
		if _, ok := child.LookupProfile(a); ok && a != child.AgentSim && a != child.AgentCustom {
			if !o.Offline {
				if c, ok := checkRoot(a, o.Euid, o.Getenv); ok {
					checks = append(checks, c)
				}
				checks = append(checks, checkAuth(a, o.Getenv))
				checks = append(checks, checkTrust(a, o.Root, o.Getenv))
			}
			checks = append(checks, checkHooks(ctx, a, o, o.Getenv))
		}
		if o.Rehearse != nil {
			checks = append(checks, o.Rehearse(ctx, a))
		}
	}
	r := Report{OK: true, Checks: checks}
	for _, c := range checks {
		if c.Status == Fail {
			r.OK = false
		}
	}
	return r
}

func checkTmux(ctx context.Context) Check {
	c := Check{Name: "tmux"}
	v, err := tmux.New("").Version(ctx)
	switch {
	case err != nil:
		c.Status, c.Detail, c.Fix = Fail, "tmux is not usable: "+err.Error(), "install tmux 3.0 or newer (apt-get install tmux, brew install tmux)"
	case !v.AtLeast(3, 0):
		c.Status, c.Detail, c.Fix = Fail, v.Raw+" is older than 3.0", "upgrade tmux to 3.0 or newer"
	default:
		c.Status, c.Detail = OK, v.Raw
	}
	return c
}

func checkCLI(ctx context.Context, agent string, environ []string) Check {
	c := Check{Name: "cli", Agent: agent}
	path, version, err := child.CheckAgent(ctx, agent, environ)
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		if ae, ok := child.AsAgentError(err); ok {
			c.Fix = ae.Action
		}
		return c
	}
	c.Status = OK
	switch {
	case path == "":
		c.Detail = agent + " needs no CLI"
	default:
		c.Detail = fmt.Sprintf("%s %s at %s", agent, orDash(version), path)
	}
	return c
}

// trustAction is the profile's action for its trust dialog, on screen or at exit.
func trustAction(agent string) string {
	p, _ := child.LookupProfile(agent)
	for _, d := range p.Dialogs {
		if d.Kind == child.DialogTrustFolder {
			return d.Action
		}
	}
	for _, d := range p.ExitDialogs {
		if d.Kind == child.DialogTrustFolder {
			return d.Action
		}
	}
	return "trust the project folder in " + agent
}

// checkRoot, for a CLI that refuses to run unattended as root without a
// variable (Profile.RootEnv), says whether a child started now would run;
// ok is false when the check does not apply (not root, or no such refusal).
func checkRoot(agent string, euid int, getenv func(string) string) (Check, bool) {
	p, _ := child.LookupProfile(agent)
	name, value, _ := strings.Cut(p.RootEnv, "=")
	if euid != 0 || name == "" {
		return Check{}, false
	}
	c := Check{Name: "root", Agent: agent}
	if getenv(name) == value {
		c.Status, c.Detail = OK, "running as root with "+p.RootEnv+" (the machine is declared a sandbox)"
		return c, true
	}
	c.Status, c.Detail = Fail, agent+" refuses to run its children unattended as root without "+p.RootEnv
	for _, d := range p.Dialogs {
		if d.Kind == child.DialogRunAsRoot {
			c.Fix = d.Action
		}
	}
	return c, true
}

// checkAuth says whether the CLI has credentials, naming where they are
// found and never printing them.
func checkAuth(agent string, getenv func(string) string) Check {
	c := Check{Name: "auth", Agent: agent}
	home := getenv("HOME")
	var envVars, files []string
	var fix string
	switch agent {
	case child.AgentClaude:
		envVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}
		files = []string{filepath.Join(home, ".claude", ".credentials.json")}
		fix = "run `claude` once and log in, or set ANTHROPIC_API_KEY"
	case child.AgentCodex:
		envVars = []string{"OPENAI_API_KEY", "CODEX_API_KEY"}
		if k := codexProviderKey(getenv); k != "" {
			envVars = append([]string{k}, envVars...)
		}
		files = []string{filepath.Join(codexHome(getenv), "auth.json")}
		fix = "run `codex login`, or set OPENAI_API_KEY"
	case child.AgentGemini:
		envVars = []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}
		files = []string{filepath.Join(home, ".gemini", "oauth_creds.json")}
		fix = "run `gemini` once and choose a sign-in, or set GEMINI_API_KEY"
	}
	for _, v := range envVars {
		if strings.TrimSpace(getenv(v)) != "" {
			c.Status, c.Detail = OK, v+" is set"
			return c
		}
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			c.Status, c.Detail = OK, "credentials in "+f
			return c
		}
	}
	c.Status, c.Detail, c.Fix = Warn, "no credentials found in the environment or the CLI's usual files", fix
	return c
}

// checkTrust says whether the CLI already trusts the project folder, so a
// child will not stop at the trust dialog.
func checkTrust(agent, root string, getenv func(string) string) Check {
	c := Check{Name: "trust", Agent: agent}
	home := getenv("HOME")
	trusted, where := false, ""
	switch agent {
	case child.AgentClaude:
		where = filepath.Join(home, ".claude.json")
		var state struct {
			Projects map[string]struct {
				HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
			} `json:"projects"`
		}
		if b, err := os.ReadFile(where); err == nil && json.Unmarshal(b, &state) == nil {
			for dir, p := range state.Projects {
				if p.HasTrustDialogAccepted && within(root, dir) {
					trusted = true
				}
			}
		}
		c.Fix = trustAction(agent)
	case child.AgentCodex:
		// codex exec runs in an untrusted folder without asking.
		c.Status, c.Detail = OK, "codex exec does not ask to trust a folder"
		return c
	case child.AgentGemini:
		where = filepath.Join(home, ".gemini", "trustedFolders.json")
		var folders map[string]string
		if b, err := os.ReadFile(where); err == nil && json.Unmarshal(b, &folders) == nil {
			for dir, level := range folders {
				if (level == "TRUST_FOLDER" && within(root, dir)) || (level == "TRUST_PARENT" && within(root, filepath.Dir(dir))) {
					trusted = true
				}
			}
		}
		if strings.EqualFold(getenv("GEMINI_CLI_TRUST_WORKSPACE"), "true") {
			trusted, where = true, "GEMINI_CLI_TRUST_WORKSPACE"
		}
		c.Fix = trustAction(agent)
	}
	if trusted {
		c.Status, c.Detail, c.Fix = OK, "the project folder is trusted ("+where+")", ""
	} else {
		c.Status, c.Detail = Warn, "the project folder is not trusted yet: a child would stop at the trust dialog ("+where+")"
	}
	return c
}

// checkHooks reports whether this tool's Stop hook is installed where the
// provider reads it and points at an existing binary. Children get theirs
// per session (Claude Code: --settings), so this matters for an orchestrating
// session and for loops.
func checkHooks(ctx context.Context, agent string, o Options, getenv func(string) string) Check {
	c := Check{Name: "hooks", Agent: agent}
	root, h := o.Root, o.Hook
	prof, _ := child.LookupProfile(agent)
	if prof.HookProvider == "" {
		c.Status, c.Detail = OK, "children of "+agent+" need no installed hook (their exit ends a step)"
		return c
	}
	p := settings.Provider(prof.HookProvider)
	h = h.For(p)
	for _, s := range settings.Scopes(p) {
		loc, err := settings.Locate(p, s, root, getenv)
		if err != nil {
			continue
		}
		st := settings.Inspect(loc, h, getenv)
		if !st.Installed {
			continue
		}
		if !st.BinaryExists {
			c.Status, c.Detail = Fail, "the "+h.Event+" hook in "+loc.Path+" runs a binary that does not exist: "+st.Command
			c.Fix = "story-automator hooks install --provider " + agent
			return c
		}
		if st.Off != "" {
			c.Status, c.Detail = Warn, h.Event+" hook installed in "+loc.Path+", but "+st.Off
			c.Fix = "edit hooksConfig in " + loc.Path
			return c
		}
		c.Status, c.Detail = OK, h.Event+" hook installed in "+loc.Path
		if p == settings.Codex {
			codexHookRuns(ctx, &c, loc, o)
		}
		return c
	}
	c.Status = Warn
	c.Detail = "no " + h.Event + " hook installed: steps are unaffected (each child gets what it needs), but an orchestrating " + agent + " session or a loop is not held"
	c.Fix = "story-automator hooks install --provider " + agent
	return c
}

// codexHookRuns adds whether Codex will run the installed hook: hooks on in
// config.toml and the entry trusted, as Codex itself lists it.
func codexHookRuns(ctx context.Context, c *Check, loc settings.Location, o Options) {
	cfg, err := settings.CodexConfigPath(o.Getenv)
	if err != nil {
		return
	}
	lister := o.Codex
	if lister == nil {
		lister = settings.CodexAppServer{Env: o.Environ}
	}
	st := settings.InspectCodex(ctx, loc, o.Hook, cfg, lister, o.Root)
	switch {
	case !st.HooksEnabled:
		c.Status, c.Detail, c.Fix = Fail, "Stop hook installed in "+loc.Path+", but hooks are off in "+cfg, st.Action
	case st.Trusted == nil:
		c.Detail += "; whether Codex trusts it is unknown (" + st.Error + ")"
	case !*st.Trusted:
		c.Status, c.Detail, c.Fix = Warn, "Stop hook installed in "+loc.Path+", but Codex will not run it until it is trusted", st.Action
	default:
		c.Detail += ", enabled and trusted by Codex"
	}
}

// codexProviderKey is the variable that holds the key of the model provider
// config.toml selects (model_provider with its env_key), if any.
func codexProviderKey(getenv func(string) string) string {
	doc, err := os.ReadFile(filepath.Join(codexHome(getenv), "config.toml"))
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

func codexHome(getenv func(string) string) string {
	if h := getenv("CODEX_HOME"); h != "" {
		return h
	}
	return filepath.Join(getenv("HOME"), ".codex")
}

// within reports whether dir is root or one of its parents.
func within(root, dir string) bool {
	root, dir = filepath.Clean(root), filepath.Clean(dir)
	return root == dir || strings.HasPrefix(root, dir+string(filepath.Separator))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
