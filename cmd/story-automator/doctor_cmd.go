package main

import (
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/doctor"
	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/workflows"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check that this machine can run stories with real agents: tmux, each CLI and its version, auth, folder trust, hooks, whether each agent can run the blocking subagents BMAD 6.12's worker needs, each agent's sandbox (that it confines a child here), and a one-turn rehearsal in tmux",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "agent", Usage: "agent to check: " + agent.OrList(agent.CLIAgents()) + " (repeatable; default: every one found on the PATH, else " + agent.DefaultAgent() + ")"},
			&cli.BoolFlag{Name: "offline", Usage: "rehearse against a private model-sim endpoint with a private home, instead of the user's own configuration and account"},
			&cli.BoolFlag{Name: "no-rehearsal", Usage: "skip the one-turn rehearsal (it starts a real agent turn; without --offline it uses the user's account)"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "bound of the rehearsal's turn, e.g. 90s"},
			&cli.StringFlag{Name: "host", Usage: "check a host of the workflow (hosts: in workflow.yaml) over ssh instead: reachable, host key known, tmux, git, disk, the same story-automator version, and its agents (its own doctor)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: doctorAction,
	}
}

func doctorAction(c *cli.Context) error {
	e := envOf(c)
	if name := c.String("host"); name != "" && name != workflows.LocalHost {
		return doctorHost(c, e, name)
	}
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

// doctorHost checks a workflow host over ssh; its agents are the ones the
// host's policy entry lists unless --agent names others.
func doctorHost(c *cli.Context, e *runtimeEnv, name string) error {
	spec, err := policyHost(e, name)
	if err != nil {
		return err
	}
	h, err := openHost(e, spec)
	if err != nil {
		return err
	}
	defer closeHost(e, h)
	agents := c.StringSlice("agent")
	if len(agents) == 0 {
		agents = spec.Agents
	}
	rep := doctor.RunHost(c.Context, doctor.HostOptions{Host: h, Version: buildinfo.Version(version), Agents: agents,
		Offline: c.Bool("offline"), NoRehearsal: c.Bool("no-rehearsal"), Timeout: c.Duration("timeout")})
	if err := cliio.Emit(e.Out, rep.Fields(), rep.WriteText); err != nil {
		return err
	}
	if !rep.OK {
		return cliio.ExitStatus(1)
	}
	return nil
}
