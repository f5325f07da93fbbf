package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/workflows"
)

func monitorSessionCommand() *cli.Command {
	def := monitor.DefaultOptions()
	return &cli.Command{
		Name:      "monitor-session",
		Usage:     "wait for a child session to reach a final state, verifying its completion",
		ArgsUsage: "NAME",
		Description: "Blocks, without polling tmux, until the session reaches a final state, and prints one JSON object.\n" +
			"Exit codes: 0 completed, 3 incomplete (the verifier still says no after the rechecks, or its spec is invalid),\n" +
			"4 crashed (exit_code_N / signal_X), 5 stuck (never started, or no progress), 6 not_found, 7 timeout,\n" +
			"8 running (--return-after passed: call again), 9 limited (the agent's CLI gave up at a usage limit,\n" +
			"rate limit or API fault: reason, resetsAt, agent), 2 usage error.",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "timeout", Value: def.Timeout, Usage: "give up with finalState timeout"},
			&cli.IntFlag{Name: "completion-rechecks", Value: def.Rechecks, Usage: "verifications of a completion in all before incomplete"},
			&cli.DurationFlag{Name: "recheck-grace", Value: def.RecheckGrace, Usage: "time between verifications"},
			&cli.StringFlag{Name: "workflow", Usage: "verify with the workflow verifier of this step"},
			&cli.StringFlag{Name: "story-key", Usage: "story the workflow verifier checks"},
			&cli.StringFlag{Name: "verify", Usage: "generic verifier: none, cmd:<command>, glob:<pattern>[=N]"},
			&cli.DurationFlag{Name: "return-after", Usage: "return finalState running after this long (0 = never)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON (always on)"},
			&cli.DurationFlag{Name: "idle-debounce", Value: def.IdleDebounce, Usage: "output quiet time before the screen heuristics run"},
			&cli.DurationFlag{Name: "start-timeout", Value: def.StartTimeout, Usage: "stuck (never_started) when no agent process has started this long after the spawn (0 = never)"},
			&cli.DurationFlag{Name: "stuck-after", Value: def.StuckAfter, Usage: "stuck (no_progress) when a started agent's output does not change for this long (0 = never)"},
			&cli.DurationFlag{Name: "verify-timeout", Value: monitor.DefaultCommandBound, Usage: "bound of one cmd: verification"},
		},
		Action: monitorSession,
	}
}

func monitorSession(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	opt, err := monitorOptions(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	dir := sessionStateDir(e)
	ch, v, err := monitorVerifier(c, e, dir, name)
	if err != nil {
		if ce := (*coded.Error)(nil); errors.As(err, &ce) {
			return err
		}
		// The monitor still looks at the session: a missing one is not_found,
		// an existing one gets this one (failing) verification at once.
		v = monitor.ContractFailure(ch.VerifierName(), err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res := monitor.Watch(ctx, name, v, opt, monitor.Deps{Tmux: sessionTmux(e), StateDir: dir, Now: e.Now,
		VerifyBound: c.Duration("verify-timeout") + 5*time.Second})
	e.Log.Info().Str("session", name).Str("finalState", string(res.FinalState)).Str("reason", res.Reason).Msg("monitor finished")
	return printMonitorResult(e, res)
}

func printMonitorResult(e *runtimeEnv, res monitor.Result) error {
	if err := cliio.WriteJSON(e.Out, res); err != nil {
		return err
	}
	if code := res.FinalState.ExitCode(); code != 0 {
		return cliio.ExitStatus(code)
	}
	return nil
}

// monitorOptions reads and checks the timing flags.
func monitorOptions(c *cli.Context) (monitor.Options, error) {
	opt := monitor.DefaultOptions()
	opt.Timeout, opt.ReturnAfter = c.Duration("timeout"), c.Duration("return-after")
	opt.Rechecks, opt.RecheckGrace = c.Int("completion-rechecks"), c.Duration("recheck-grace")
	opt.IdleDebounce, opt.StartTimeout, opt.StuckAfter = c.Duration("idle-debounce"), c.Duration("start-timeout"), c.Duration("stuck-after")
	if err := opt.Validate(); err != nil {
		return opt, coded.Usage("%v", err)
	}
	if c.Duration("verify-timeout") < 0 {
		return opt, coded.Usage("--verify-timeout must not be negative")
	}
	return opt, nil
}

// workflowVerifier builds monitor-session's --workflow verifier (a
// variable so that tests can take it away).
var workflowVerifier = workflows.StepVerifier

// monitorVerifier is the verifier the flags choose (see monitor.ChooseVerifier).
func monitorVerifier(c *cli.Context, e *runtimeEnv, dir, name string) (monitor.VerifierChoice, monitor.Verifier, error) {
	ch := monitor.VerifierChoice{Workflow: c.String("workflow"), StoryKey: c.String("story-key"), Verify: c.String("verify"),
		StoryKeySet: c.IsSet("story-key"), VerifySet: c.IsSet("verify"),
		Root: e.ProjectRoot, StateDir: dir, Name: name, Bound: c.Duration("verify-timeout")}
	if workflowVerifier != nil {
		ch.ForWorkflow = func(step, story string) (monitor.Verifier, error) {
			return workflowVerifier(e.ProjectRoot, step, story)
		}
	}
	v, err := monitor.ChooseVerifier(ch)
	return ch, v, err
}
