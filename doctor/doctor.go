// Package doctor checks that this machine can run stories with a real agent:
// tmux, each agent CLI and its version, auth, folder trust, hooks, its
// sandbox, and a one-turn rehearsal of a real child in tmux.
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/hooks"
	"github.com/story-automator/story-automator/orchestrator/bmad"
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
	Host   string `json:"host,omitempty"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Code names a failure a script can act on (a refusal's error code).
	Code string `json:"code,omitempty"`
}

// Report is every check; OK is false when any failed.
type Report struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
	// Host is the host checked (doctor --host); "" for this machine.
	Host string `json:"host,omitempty"`
	// RoundTrips counts the exchanges with Host over ssh.
	RoundTrips int64 `json:"roundTrips,omitempty"`
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
	Hook hooks.Hook
	// Euid is the user the tool runs as (os.Geteuid()): some CLIs refuse root.
	Euid int
	// Codex lists the hooks the installed CLI sees, for an agent whose
	// hooks need trust (nil: its app-server, hooks.Lister).
	Codex hooks.CodexLister
	// Rehearse runs one real turn of agent in tmux; nil skips the rehearsal.
	Rehearse func(ctx context.Context, agentName string) Check
	// FindUV looks for uv and its Python (nil: bmad.FindUV).
	FindUV func(ctx context.Context) bmad.UV
}

// Run makes every check, in order.
func Run(ctx context.Context, o Options) Report {
	var checks []Check
	checks = append(checks, checkTmux(ctx))
	checks = append(checks, checkBMAD(ctx, o)...)
	for _, a := range o.Agents {
		found := checkCLI(ctx, a, o.Environ)
		checks = append(checks, found)
		if found.Status == Fail {
			continue
		}
		if p, ok := agent.LookupProfile(a); ok && p.Program != "" {
			if !o.Offline {
				// A confined child starts without the switch root needs a
				// variable for (Claude Code's bypass mode).
				if c, ok := checkRoot(a, o.Euid, o.Getenv); ok && sandboxOff(o.Root) {
					checks = append(checks, c)
				}
				checks = append(checks, checkAuth(a, o.Getenv))
				checks = append(checks, checkTrust(a, o.Root, o.Getenv))
			}
			checks = append(checks, checkHooks(ctx, a, o, o.Getenv))
		}
		if c, ok := checkSubagents(a, o); ok {
			checks = append(checks, c)
		}
		if c, ok := checkSkillNeeds(a, o); ok {
			checks = append(checks, c)
		}
		checks = append(checks, checkSandbox(ctx, a, o))
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

func checkCLI(ctx context.Context, agentName string, environ []string) Check {
	c := Check{Name: "cli", Agent: agentName}
	path, version, err := child.CheckAgent(ctx, agentName, environ)
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		if ae, ok := child.AsAgentError(err); ok {
			c.Fix = ae.Action
		}
		return c
	}
	c.Status = OK
	if path == "" {
		c.Detail = agentName + " needs no CLI"
	} else {
		c.Detail = fmt.Sprintf("%s %s at %s", agentName, orDash(version), path)
	}
	return c
}

// trustAction is the profile's action for its trust dialog, on screen or at exit.
func trustAction(agentName string) string {
	p, _ := agent.LookupProfile(agentName)
	for _, d := range p.Dialogs {
		if d.Kind == agent.DialogTrustFolder {
			return d.Action
		}
	}
	for _, d := range p.ExitDialogs {
		if d.Kind == agent.DialogTrustFolder {
			return d.Action
		}
	}
	return "trust the project folder in " + agentName
}

// checkRoot, for a CLI that refuses to run unattended as root without a
// variable (Profile.RootEnv), says whether a child started now would run;
// ok is false when the check does not apply (not root, or no such refusal).
func checkRoot(agentName string, euid int, getenv func(string) string) (Check, bool) {
	p, _ := agent.LookupProfile(agentName)
	name, value, _ := strings.Cut(p.RootEnv, "=")
	if euid != 0 || name == "" {
		return Check{}, false
	}
	c := Check{Name: "root", Agent: agentName}
	if getenv(name) == value {
		c.Status, c.Detail = OK, "running as root with "+p.RootEnv+" (the machine is declared a sandbox)"
		return c, true
	}
	c.Status, c.Detail = Fail, agentName+" refuses to run its children unattended as root without "+p.RootEnv
	for _, d := range p.Dialogs {
		if d.Kind == agent.DialogRunAsRoot {
			c.Fix = d.Action
		}
	}
	return c, true
}

// checkAuth says whether the CLI has credentials, naming where they are
// found and never printing them: the variables and files its profile names.
func checkAuth(agentName string, getenv func(string) string) Check {
	c := Check{Name: "auth", Agent: agentName}
	p, _ := agent.LookupProfile(agentName)
	envVars := p.AuthEnv
	if k := child.ProviderKey(p, getenv); k != "" {
		envVars = append([]string{k}, envVars...)
	}
	for _, v := range envVars {
		if strings.TrimSpace(getenv(v)) != "" {
			c.Status, c.Detail = OK, v+" is set"
			return c
		}
	}
	for _, rel := range p.AuthFiles {
		f := p.StatePath(rel, getenv)
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			c.Status, c.Detail = OK, "credentials in "+f
			return c
		}
	}
	c.Status, c.Detail, c.Fix = Warn, "no credentials found in the environment or the CLI's usual files", p.AuthFix
	return c
}

// checkTrust says whether the CLI already trusts the project folder, so a
// child will not stop at the trust dialog: the record its profile names,
// read by its format, or the environment that trusts a child (TrustEnv).
func checkTrust(agentName, root string, getenv func(string) string) Check {
	c := Check{Name: "trust", Agent: agentName}
	p, _ := agent.LookupProfile(agentName)
	if p.TrustFormat == "" && p.TrustNote != "" {
		c.Status, c.Detail = OK, p.TrustNote
		return c
	}
	where := ""
	if p.TrustFile != "" {
		where = p.StatePath(p.TrustFile, getenv)
	}
	trusted := trustRecorded(p.TrustFormat, where, root)
	if name, ok := trustedByEnv(p, getenv); ok {
		trusted, where = true, name
	}
	if p.TrustFormat != "" {
		c.Fix = trustAction(agentName)
	}
	if trusted {
		c.Status, c.Detail, c.Fix = OK, "the project folder is trusted ("+where+")", ""
	} else {
		c.Status, c.Detail = Warn, "the project folder is not trusted yet: a child would stop at the trust dialog ("+where+")"
	}
	return c
}

// trustRecorded reads a trust record of the given format at path and says
// whether it trusts root.
func trustRecorded(format, path, root string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	switch format {
	case agent.TrustProjectsJSON:
		// {"projects": {dir: {"hasTrustDialogAccepted": true}}}; a trusted parent covers root.
		var state struct {
			Projects map[string]struct {
				HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
			} `json:"projects"`
		}
		if json.Unmarshal(b, &state) != nil {
			return false
		}
		for dir, p := range state.Projects {
			if p.HasTrustDialogAccepted && within(root, dir) {
				return true
			}
		}
	case agent.TrustFoldersJSON:
		// {dir: "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}.
		var folders map[string]string
		if json.Unmarshal(b, &folders) != nil {
			return false
		}
		for dir, level := range folders {
			if (level == "TRUST_FOLDER" && within(root, dir)) || (level == "TRUST_PARENT" && within(root, filepath.Dir(dir))) {
				return true
			}
		}
	}
	return false
}

// trustedByEnv says whether the environment already holds every variable
// the profile's TrustEnv sets (compared without case), naming the first.
func trustedByEnv(p agent.Profile, getenv func(string) string) (string, bool) {
	if len(p.TrustEnv) == 0 {
		return "", false
	}
	names := make([]string, 0, len(p.TrustEnv))
	for k, v := range p.TrustEnv {
		if !strings.EqualFold(getenv(k), v) {
			return "", false
		}
		names = append(names, k)
	}
	sort.Strings(names)
	return names[0], true
}

// checkHooks reports whether this tool's Stop hook is installed where the
// provider reads it and points at an existing binary. Children get theirs
// per session (Claude Code: --settings), so this matters for an orchestrating
// session and for loops.
func checkHooks(ctx context.Context, agentName string, o Options, getenv func(string) string) Check {
	c := Check{Name: "hooks", Agent: agentName}
	root, h := o.Root, o.Hook
	p := hooks.Provider(agentName)
	scopes := hooks.Scopes(p)
	if len(scopes) == 0 {
		c.Status, c.Detail = OK, "children of "+agentName+" need no installed hook (their exit ends a step)"
		return c
	}
	h = h.For(p)
	for _, s := range scopes {
		loc, err := hooks.Locate(p, s, root, getenv)
		if err != nil {
			continue
		}
		st := hooks.Inspect(loc, h, getenv)
		if !st.Installed {
			continue
		}
		if !st.BinaryExists {
			c.Status, c.Detail = Fail, "the "+h.Event+" hook in "+loc.Path+" runs a binary that does not exist: "+st.Command
			c.Fix = "story-automator hooks install --provider " + agentName
			return c
		}
		if st.Off != "" {
			c.Status, c.Detail = Warn, h.Event+" hook installed in "+loc.Path+", but "+st.Off
			c.Fix = "edit hooksConfig in " + loc.Path
			return c
		}
		c.Status, c.Detail = OK, h.Event+" hook installed in "+loc.Path
		hookRuns(ctx, &c, loc, o, getenv)
		return c
	}
	c.Status = Warn
	c.Detail = "no " + h.Event + " hook installed: steps are unaffected (each child gets what it needs), but an orchestrating " + agentName + " session or a loop is not held"
	c.Fix = "story-automator hooks install --provider " + agentName
	return c
}

// hookRuns adds, for an agent whose hooks need trust (Codex), whether it
// will run the installed hook: hooks on in config.toml and the entry
// trusted, as the CLI itself lists it.
func hookRuns(ctx context.Context, c *Check, loc hooks.Location, o Options, getenv func(string) string) {
	lister := o.Codex
	if lister == nil {
		lister = hooks.Lister(loc.Provider, o.Environ)
	}
	st, ok := hooks.InspectTrust(ctx, loc, o.Hook, getenv, lister, o.Root)
	if !ok {
		return
	}
	prof, _ := agent.LookupProfile(string(loc.Provider))
	switch {
	case !st.HooksEnabled:
		c.Status, c.Detail, c.Fix = Fail, "Stop hook installed in "+loc.Path+", but hooks are off in "+st.ConfigFile, st.Action
	case st.Trusted == nil:
		c.Detail += "; whether " + prof.Product + " trusts it is unknown (" + st.Error + ")"
	case !*st.Trusted:
		c.Status, c.Detail, c.Fix = Warn, "Stop hook installed in "+loc.Path+", but "+prof.Product+" will not run it until it is trusted", st.Action
	default:
		c.Detail += ", enabled and trusted by " + prof.Product
	}
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
