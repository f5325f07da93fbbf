package main

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/doctor"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check that this machine can run stories with real agents: tmux, each CLI and its version, auth, folder trust, hooks, and a one-turn rehearsal in tmux",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "agent", Usage: "agent to check: " + agent.OrList(agent.CLIAgents()) + " (repeatable; default: every one found on the PATH, else " + agent.DefaultAgent() + ")"},
			&cli.BoolFlag{Name: "offline", Usage: "rehearse against a private model-sim endpoint with a private home, instead of the user's own configuration and account"},
			&cli.BoolFlag{Name: "no-rehearsal", Usage: "skip the one-turn rehearsal (it starts a real agent turn; without --offline it uses the user's account)"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "bound of the rehearsal's turn, e.g. 90s"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: doctorAction,
	}
}

func doctorAction(c *cli.Context) error {
	e := envOf(c)
	agents, err := doctor.Agents(c.Context, c.StringSlice("agent"), e.Environ())
	if err != nil {
		return coded.Usage("%s", err)
	}
	h, err := currentHook(e)
	if err != nil {
		return err
	}
	exe, err := e.Exe()
	if err != nil {
		return coded.Fail("binary_path", "cannot determine the path of this binary: %v", err)
	}
	o := doctor.Options{Root: e.ProjectRoot, Agents: agents, Offline: c.Bool("offline"), Getenv: e.Getenv,
		Environ: e.Environ(), Hook: h, Euid: os.Geteuid()}
	if !c.Bool("no-rehearsal") {
		r := doctor.Rehearsal{Exe: exe, Root: e.ProjectRoot, Environ: e.Environ(), Offline: c.Bool("offline"), Timeout: c.Duration("timeout")}
		o.Rehearse = r.Run
	}
	rep := doctor.Run(c.Context, o)
	if err := cliio.Emit(e.Out, rep.Fields(), rep.WriteText); err != nil {
		return err
	}
	if !rep.OK {
		return cliio.ExitStatus(1)
	}
	return nil
}
