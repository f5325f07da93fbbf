package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/stophook/settings"
)

func init() { register(hooksCommand) }

// geminiProjectNotice is printed after a Gemini project install: Gemini CLI
// 0.61 ignores a project's hooks in a folder it does not trust.
const geminiProjectNotice = "Gemini CLI runs a project's hooks only in a folder it trusts (and warns about new ones once)"

func hooksCommand() *cli.Command {
	target := func() []cli.Flag {
		return []cli.Flag{
			&cli.StringFlag{Name: "scope", Value: string(settings.ScopeProject), Usage: "project, local or user"},
			&cli.StringFlag{Name: "provider", Value: string(settings.Claude), Usage: "claude, codex or gemini (its AfterAgent hook)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the resulting file and change nothing"},
		}
	}
	installFlags := append(target(), &cli.BoolFlag{Name: "force", Usage: "install even when this binary is a temporary build (go run, go test, the temp directory), with a warning"})
	return &cli.Command{
		Name:  "hooks",
		Usage: "install, remove or inspect the story-automator Stop hook in agent settings files",
		Subcommands: []*cli.Command{
			{
				Name:   "install",
				Usage:  "add the Stop hook (idempotent; normalises older entries; backs up the file it changes)",
				Flags:  installFlags,
				Action: hooksInstall,
			},
			{
				Name:   "uninstall",
				Usage:  "remove our Stop hook entries, keeping everything else",
				Flags:  target(),
				Action: hooksUninstall,
			},
			{
				Name:   "status",
				Usage:  "report, for every provider and scope, whether and how the Stop hook is installed",
				Action: hooksStatus,
			},
		},
	}
}

// hooksLocation resolves --provider and --scope to a settings file.
func hooksLocation(c *cli.Context) (settings.Location, error) {
	p := settings.Provider(c.String("provider"))
	if len(settings.Scopes(p)) == 0 {
		return settings.Location{}, cliio.UsageError("--provider must be claude, codex or gemini, got %q", p)
	}
	s := settings.Scope(c.String("scope"))
	if s != settings.ScopeProject && s != settings.ScopeLocal && s != settings.ScopeUser {
		return settings.Location{}, cliio.UsageError("--scope must be project, local or user, got %q", s)
	}
	e := envOf(c)
	loc, err := settings.Locate(p, s, e.ProjectRoot, e.Getenv)
	if errors.Is(err, settings.ErrUnsupportedScope) {
		return loc, cliio.UsageError("%v", err)
	}
	if err != nil {
		return loc, hooksFailure(err, loc)
	}
	return loc, nil
}

// currentHook is the entry install writes for this binary.
func currentHook(e *runtimeEnv) (settings.Hook, error) {
	exe, err := e.Exe()
	if err != nil {
		return settings.Hook{}, cliio.Fail("binary_path", "cannot determine the path of this binary: %v", err)
	}
	h, err := settings.NewHook(exe)
	if err != nil {
		return settings.Hook{}, cliio.Fail("binary_path", "%v", err)
	}
	return h, nil
}

func hooksFailure(err error, loc settings.Location) *cliio.Failure {
	f := cliio.Fail(settings.Code(err), "%v", err)
	f.Fields = map[string]any{"provider": loc.Provider, "scope": loc.Scope, "file": loc.Path}
	return f
}

func hooksInstall(c *cli.Context) error {
	return hooksChange(c, true)
}

func hooksUninstall(c *cli.Context) error {
	return hooksChange(c, false)
}

// hooksChange runs install or uninstall on the selected file and prints the result.
func hooksChange(c *cli.Context, install bool) error {
	if err := noArgs(c); err != nil {
		return err
	}
	loc, err := hooksLocation(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	opt := settings.Options{DryRun: c.Bool("dry-run"), Now: e.Now}
	var res settings.Result
	var warning string
	var codexKeys []string
	h, err := currentHook(e)
	if !install && loc.Provider == settings.Codex {
		// Codex's trust keys name the entries' positions: read them before they go.
		if codexKeys, err = settings.CodexHookKeys(loc.Path, h); err != nil {
			return hooksFailure(err, loc)
		}
	}
	if install {
		if err != nil {
			return err
		}
		if h, warning, err = installableHook(e, h, c.Bool("force")); err != nil {
			return err
		}
		if warning != "" {
			fmt.Fprintln(e.Err, "story-automator: "+warning)
		}
		h = h.For(loc.Provider)
		res, err = settings.Install(loc.Path, h, opt)
	} else {
		// Without a resolvable binary, uninstall still recognises ours by name.
		h = h.For(loc.Provider)
		res, err = settings.Uninstall(loc.Path, h, opt)
	}
	if err != nil {
		return hooksFailure(err, loc)
	}
	e.Log.Info().Str("file", res.Path).Bool("changed", res.Changed).Strs("actions", res.Actions).Msg("hooks " + c.Command.Name)
	out := changeFields(loc, res, h, opt.DryRun, install)
	if warning != "" {
		out["warning"] = warning
	}
	if loc.Provider == settings.Codex {
		codex, action, err := codexConfigChange(c, e, loc, h, codexKeys, install, opt.DryRun)
		if err != nil {
			return hooksFailure(err, loc)
		}
		out["codex"] = codex
		if action != "" {
			out["notice"] = "Codex will not run the hook yet: " + action
		}
	}
	return cliio.OKJSON(e.Out, out)
}

// codexConfigChange does the config.toml half of a Codex install (hooks on,
// our entries trusted with the hashes Codex lists) or uninstall (our trust
// entries removed); action is what the user must still do for Codex to run it.
func codexConfigChange(c *cli.Context, e *runtimeEnv, loc settings.Location, h settings.Hook, keys []string, install, dryRun bool) (out any, action string, err error) {
	cfg, err := settings.CodexConfigPath(e.Getenv)
	if err != nil {
		return nil, "", err
	}
	if install {
		st, err := settings.SetupCodex(c.Context, loc, h, cfg, settings.CodexAppServer{}, e.ProjectRoot, dryRun)
		return st, st.Action, err
	}
	actions, err := settings.ForgetCodexTrust(cfg, keys, dryRun)
	if err != nil {
		return nil, "", err
	}
	return map[string]any{"configFile": cfg, "actions": actions}, "", nil
}

// installableHook swaps a transient binary for a lasting one (see hookBinary).
func installableHook(e *runtimeEnv, h settings.Hook, force bool) (settings.Hook, string, error) {
	exe, err := e.Exe()
	if err != nil {
		return h, "", nil
	}
	path, warning, err := hookBinary(e, exe, force)
	if err != nil || path == exe {
		return h, warning, err
	}
	nh, err := settings.NewHook(path)
	if err != nil {
		return h, "", cliio.Fail("binary_path", "%v", err)
	}
	return nh, warning, nil
}

func changeFields(loc settings.Location, res settings.Result, h settings.Hook, dryRun, install bool) map[string]any {
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
		if loc.Provider == settings.Gemini && loc.Scope == settings.ScopeProject {
			out["notice"] = geminiProjectNotice
		}
	}
	if dryRun {
		out["content"] = string(res.Content)
	}
	return out
}

func hooksStatus(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	h, err := currentHook(e)
	if err != nil {
		return err
	}
	var reports []settings.Status
	installed := false
	for _, p := range []settings.Provider{settings.Claude, settings.Codex, settings.Gemini} {
		for _, s := range settings.Scopes(p) {
			loc, err := settings.Locate(p, s, e.ProjectRoot, e.Getenv)
			st := settings.Status{Location: loc, Entries: []settings.Entry{}}
			if err != nil {
				st.Error, st.Message = settings.Code(err), err.Error()
			} else {
				st = settings.Inspect(loc, h.For(p), e.Getenv)
			}
			if p == settings.Codex && st.Installed {
				if cfg, err := settings.CodexConfigPath(e.Getenv); err == nil {
					cs := settings.InspectCodex(c.Context, loc, h, cfg, settings.CodexAppServer{}, e.ProjectRoot)
					st.Codex = &cs
				}
			}
			installed = installed || st.Installed
			reports = append(reports, st)
		}
	}
	out := map[string]any{"ok": true, "command": h.Command, "installed": installed, "hooks": reports}
	return cliio.Emit(e.Out, out, func(w io.Writer) { settings.WriteTable(w, h.Command, reports) })
}
