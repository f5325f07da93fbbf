package hooks

import (
	"context"
	"errors"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
)

var (
	usageError = coded.Usage
	failure    = coded.Fail
)

// fileError is err about the settings file at loc.
func fileError(err error, loc Location) *coded.Error {
	f := failure(Code(err), "%v", err)
	f.Fields = map[string]any{"provider": loc.Provider, "scope": loc.Scope, "file": loc.Path}
	return f
}

// Env is what a hooks operation reads of the world.
type Env struct {
	ProjectRoot string
	Getenv      func(string) string
	Now         func() time.Time
	// Exe is the path of this binary, which the hook runs.
	Exe func() (string, error)
	// Lister lists the hooks a CLI with a trust step sees (nil: its
	// program's app-server, CodexAppServer).
	Lister CodexLister
}

// Change is one `hooks install` or `hooks uninstall`.
type Change struct {
	Provider, Scope string
	Install         bool
	DryRun          bool
	// Force installs a transient binary (with a warning) instead of refusing.
	Force bool
}

// Changed is what a change did: the JSON fields to print, the settings
// file's result, and a warning the user should see at once ("" = none).
type Changed struct {
	Fields  map[string]any
	Result  Result
	Warning string
}

// Locate resolves a provider and scope given by name to a settings file.
func (e Env) locate(provider, scope string) (Location, error) {
	p := Provider(provider)
	if _, ok := facts(p); !ok {
		if prof, known := agent.LookupProfile(string(p)); known && prof.HookRefusal != "" {
			return Location{}, usageError("--provider %s: %s has no hook to install: %s", p, prof.Product, prof.HookRefusal).
				WithAction("hold the run from a session of %s, or run `story-automator run` from a shell", providerList())
		}
		return Location{}, usageError("--provider must be %s, got %q", providerList(), p)
	}
	s := Scope(scope)
	if s != ScopeProject && s != ScopeLocal && s != ScopeUser {
		return Location{}, usageError("--scope must be project, local or user, got %q", s)
	}
	loc, err := Locate(p, s, e.ProjectRoot, e.Getenv)
	if errors.Is(err, ErrUnsupportedScope) {
		return loc, usageError("%v", err)
	}
	if err != nil {
		return loc, fileError(err, loc)
	}
	return loc, nil
}

// CurrentHook is the entry install writes for this binary.
func (e Env) CurrentHook() (Hook, error) {
	exe, err := e.Exe()
	if err != nil {
		return Hook{}, failure("binary_path", "cannot determine the path of this binary: %v", err)
	}
	h, err := NewHook(exe)
	if err != nil {
		return Hook{}, failure("binary_path", "%v", err)
	}
	return h, nil
}

// Apply runs an install or uninstall on the selected settings file (and,
// for a CLI whose hooks need trust, where it keeps that trust).
func Apply(ctx context.Context, e Env, ch Change) (Changed, error) {
	var out Changed
	loc, err := e.locate(ch.Provider, ch.Scope)
	if err != nil {
		return out, err
	}
	opt := Options{DryRun: ch.DryRun, Now: e.Now}
	var codexKeys []string
	h, err := e.CurrentHook()
	trust := trustOf(loc.Provider)
	if !ch.Install && trust == agent.HookTrustTOMLHash {
		// Codex's trust keys name the entries' positions: read them before they go.
		if codexKeys, err = CodexHookKeys(loc.Path, h); err != nil {
			return out, fileError(err, loc)
		}
	}
	if ch.Install {
		if err != nil {
			return out, err
		}
		if h, out.Warning, err = e.installableHook(h, ch.Force); err != nil {
			return out, err
		}
		h = h.For(loc.Provider)
		out.Result, err = Install(loc.Path, h, opt)
	} else {
		// Without a resolvable binary, uninstall still recognises ours by name.
		h = h.For(loc.Provider)
		out.Result, err = Uninstall(loc.Path, h, opt)
	}
	if err != nil {
		return out, fileError(err, loc)
	}
	out.Fields = changeFields(loc, out.Result, h, opt.DryRun, ch.Install)
	if out.Warning != "" {
		out.Fields["warning"] = out.Warning
	}
	if trust == agent.HookTrustTOMLHash {
		report, action, err := e.codexConfigChange(ctx, loc, h, codexKeys, ch.Install, opt.DryRun)
		if err != nil {
			return out, fileError(err, loc)
		}
		out.Fields[trustField] = report
		if action != "" {
			out.Fields["notice"] = productOf(loc.Provider) + " will not run the hook yet: " + action
		}
	}
	return out, nil
}

// codexConfigChange does the config.toml half of a Codex install (hooks on,
// our entries trusted with the hashes Codex lists) or uninstall (our trust
// entries removed); action is what the user must still do for Codex to run it.
func (e Env) codexConfigChange(ctx context.Context, loc Location, h Hook, keys []string, install, dryRun bool) (out any, action string, err error) {
	cfg, err := CodexConfigPath(loc.Provider, e.Getenv)
	if err != nil {
		return nil, "", err
	}
	if install {
		st, err := SetupCodex(ctx, loc, h, cfg, e.lister(loc.Provider), e.ProjectRoot, dryRun)
		return st, st.Action, err
	}
	actions, err := ForgetCodexTrust(cfg, keys, dryRun)
	if err != nil {
		return nil, "", err
	}
	return map[string]any{"configFile": cfg, "actions": actions}, "", nil
}

// installableHook swaps a transient binary for a lasting one (see hookBinary).
func (e Env) installableHook(h Hook, force bool) (Hook, string, error) {
	exe, err := e.Exe()
	if err != nil {
		return h, "", nil //nolint:nilerr // without our own path there is nothing to swap: the hook as given
	}
	path, warning, err := hookBinary(exe, force, e.Getenv)
	if err != nil || path == exe {
		return h, warning, err
	}
	nh, err := NewHook(path)
	if err != nil {
		return h, "", failure("binary_path", "%v", err)
	}
	return nh, warning, nil
}

func changeFields(loc Location, res Result, h Hook, dryRun, install bool) map[string]any {
	out := map[string]any{
		"provider": loc.Provider, "scope": loc.Scope, "file": loc.Path,
		"changed": res.Changed, "created": res.Created, "dryRun": dryRun,
		"backup": nil, "actions": append([]string{}, res.Actions...),
	}
	if !install {
		out["restored"], out["removed"] = res.Restored, res.Removed
	}
	if res.Backup != "" {
		out["backup"] = res.Backup
	}
	if res.Path != loc.Path {
		out["target"] = res.Path
	}
	if install {
		out["command"] = h.Command
		out["timeout"] = h.Timeout
		out["event"] = h.Event
		if prof, _ := facts(loc.Provider); prof.HookProjectNote != "" && loc.Scope == ScopeProject {
			out["notice"] = prof.HookProjectNote
		}
	}
	if dryRun {
		out["content"] = string(res.Content)
	}
	return out
}

// Report is `hooks status`: every provider's settings files and what they say
// about our hook.
type Report struct {
	Command   string
	Installed bool
	Hooks     []Status
}

// Survey inspects every provider and scope for our hook.
func Survey(ctx context.Context, e Env) (Report, error) {
	h, err := e.CurrentHook()
	if err != nil {
		return Report{}, err
	}
	rep := Report{Command: h.Command}
	for _, p := range Providers() {
		for _, s := range Scopes(p) {
			loc, err := Locate(p, s, e.ProjectRoot, e.Getenv)
			st := Status{Location: loc, Entries: []Entry{}}
			if err != nil {
				st.Error, st.Message = Code(err), err.Error()
			} else {
				st = Inspect(loc, h.For(p), e.Getenv)
			}
			if st.Installed {
				if cs, ok := InspectTrust(ctx, loc, h, e.Getenv, e.lister(p), e.ProjectRoot); ok {
					st.Codex = &cs
				}
			}
			rep.Installed = rep.Installed || st.Installed
			rep.Hooks = append(rep.Hooks, st)
		}
	}
	return rep, nil
}

// Providers lists the providers whose settings take our hook, from the agent
// profile table, in the order status reports them.
func Providers() []Provider {
	var out []Provider
	for _, p := range agent.HookProviders() {
		out = append(out, Provider(p))
	}
	return out
}

// providerList is the providers as a sentence: "a, b or c".
func providerList() string { return agent.OrList(agent.HookProviders()) }
