package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/doctor"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/tmux/child"
)

func init() { register(doctorCommand) }

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check that this machine can run stories with real agents: tmux, each CLI and its version, auth, folder trust, hooks, and a one-turn rehearsal in tmux",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "agent", Usage: "agent to check: claude, codex or gemini (repeatable; default: every one found on the PATH, else claude)"},
			&cli.BoolFlag{Name: "offline", Usage: "rehearse against a private model-sim endpoint with a private home, instead of the user's own configuration and account"},
			&cli.BoolFlag{Name: "no-rehearsal", Usage: "skip the one-turn rehearsal (it starts a real agent turn; without --offline it uses the user's account)"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "bound of the rehearsal's turn, e.g. 90s"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: doctorAction,
	}
}

func doctorAction(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	agents, err := doctorAgents(c.StringSlice("agent"), e.Environ())
	if err != nil {
		return err
	}
	h, err := currentHook(e)
	if err != nil {
		return err
	}
	exe, err := e.Exe()
	if err != nil {
		return cliio.Fail("binary_path", "cannot determine the path of this binary: %v", err)
	}
	o := doctor.Options{Root: e.ProjectRoot, Agents: agents, Offline: c.Bool("offline"), Getenv: e.Getenv,
		Environ: e.Environ(), Hook: h, Euid: os.Geteuid()}
	if !c.Bool("no-rehearsal") {
		r := doctor.Rehearsal{Exe: exe, Root: e.ProjectRoot, Environ: e.Environ(), Offline: c.Bool("offline"), Timeout: c.Duration("timeout")}
		o.Rehearse = r.Run
	}
	rep := doctor.Run(context.Background(), o)
	failed := 0
	for _, ch := range rep.Checks {
		if ch.Status == doctor.Fail {
			failed++
		}
	}
	if c.Bool("json") || !cliio.IsTerminal(e.Out) {
		out := map[string]any{"ok": rep.OK, "checks": rep.Checks}
		if !rep.OK {
			out["error"], out["message"] = "doctor_failed", fmt.Sprintf("%d check(s) failed", failed)
		}
		if err := cliio.WriteJSON(e.Out, out); err != nil {
			return err
		}
	} else {
		for _, ch := range rep.Checks {
			name := ch.Name
			if ch.Agent != "" {
				name = ch.Agent + " " + ch.Name
			}
			fmt.Fprintf(e.Out, "%-4s  %-16s %s\n", ch.Status, name, ch.Detail)
			if ch.Fix != "" {
				fmt.Fprintf(e.Out, "      %-16s fix: %s\n", "", ch.Fix)
			}
		}
	}
	if !rep.OK {
		return cliio.ExitStatus(1)
	}
	return nil
}

// doctorAgents are the agents to check: the ones asked for, else every
// agent CLI found on the PATH, else claude (whose absence is then reported).
func doctorAgents(asked, environ []string) ([]string, error) {
	if len(asked) == 0 {
		for _, a := range child.CLIAgents() {
			if _, _, err := child.CheckAgent(context.Background(), a, environ); err == nil {
				asked = append(asked, a)
			} else if ae, ok := child.AsAgentError(err); ok && ae.Code == child.CodeAgentUnsupported {
				asked = append(asked, a)
			}
		}
		if len(asked) == 0 {
			asked = []string{child.AgentClaude}
		}
		return asked, nil
	}
	var out []string
	for _, a := range asked {
		for _, one := range strings.Split(a, ",") {
			one = strings.TrimSpace(one)
			if _, ok := child.LookupProfile(one); !ok || one == child.AgentCustom {
				return nil, cliio.UsageError("--agent %q: use claude, codex, gemini or sim", one)
			}
			out = append(out, one)
		}
	}
	return out, nil
}
