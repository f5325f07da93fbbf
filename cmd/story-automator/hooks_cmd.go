package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/hooks"
	"github.com/story-automator/story-automator/internal/cliio"
)

func hooksCommand() *cli.Command {
	target := func() []cli.Flag {
		return []cli.Flag{
			&cli.StringFlag{Name: "scope", Value: string(hooks.ScopeProject), Usage: "project, local or user"},
			&cli.StringFlag{Name: "provider", Value: hooks.DefaultProvider(), Usage: hooks.ProviderUsage()},
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
				Action: func(c *cli.Context) error { return hooksChange(c, true) },
			},
			{
				Name:   "uninstall",
				Usage:  "remove our Stop hook entries, keeping everything else",
				Flags:  target(),
				Action: func(c *cli.Context) error { return hooksChange(c, false) },
			},
			{
				Name:   "status",
				Usage:  "report, for every provider and scope, whether and how the Stop hook is installed",
				Action: hooksStatus,
			},
		},
	}
}

func hooksEnv(e *runtimeEnv) hooks.Env {
	return hooks.Env{ProjectRoot: e.ProjectRoot, Getenv: e.Getenv, Now: e.Now, Exe: e.Exe}
}

// currentHook is the entry install writes for this binary.
func currentHook(e *runtimeEnv) (hooks.Hook, error) {
	h, err := hooksEnv(e).CurrentHook()
	return h, err
}

// hooksChange runs install or uninstall on the selected file and prints the result.
func hooksChange(c *cli.Context, install bool) error {
	e := envOf(c)
	ch := hooks.Change{Provider: c.String("provider"), Scope: c.String("scope"), Install: install, DryRun: c.Bool("dry-run"), Force: c.Bool("force")}
	res, err := hooks.Apply(c.Context, hooksEnv(e), ch)
	if res.Warning != "" {
		fmt.Fprintln(e.Err, "story-automator: "+res.Warning)
	}
	if err != nil {
		return err
	}
	e.Log.Info().Str("file", res.Result.Path).Bool("changed", res.Result.Changed).Strs("actions", res.Result.Actions).Msg("hooks " + c.Command.Name)
	return cliio.OKJSON(e.Out, res.Fields)
}

func hooksStatus(c *cli.Context) error {
	e := envOf(c)
	rep, err := hooks.Survey(c.Context, hooksEnv(e))
	if err != nil {
		return err
	}
	out := map[string]any{"ok": true, "command": rep.Command, "installed": rep.Installed, "hooks": rep.Hooks}
	return cliio.Emit(e.Out, out, func(w io.Writer) { hooks.WriteTable(w, rep.Command, rep.Hooks) })
}
