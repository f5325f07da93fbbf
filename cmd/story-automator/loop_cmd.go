package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/stophook"
	"github.com/story-automator/story-automator/stophook/loop"
)

func loopCommand() *cli.Command {
	return &cli.Command{
		Name:  "loop",
		Usage: "run a prompt loop (Ralph / Forge style) on the owner session's Stop hook",
		Subcommands: []*cli.Command{
			{
				Name:      "start",
				Usage:     "start a loop: the owner's Stop hook re-injects PROMPT until an exit fires",
				ArgsUsage: "PROMPT",
				Flags: append(loopShapeFlags(),
					&cli.StringFlag{Name: "prompt-file", Usage: "read the prompt from this file (- = stdin) instead of PROMPT"}),
				Action: loopStart,
			},
			{Name: "status", Usage: "print the loop", Action: loopAction(func(c *cli.Context, p *loop.Controller) (loop.Result, error) {
				return p.Status()
			})},
			{
				Name:  "pause",
				Usage: "pause the loop: the Stop hook lets every stop through until resume",
				Flags: []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why the loop is paused (shown by loop status)"}},
				Action: loopAction(func(c *cli.Context, p *loop.Controller) (loop.Result, error) {
					return p.Pause(c.Context, c.String("reason"))
				}),
			},
			{
				Name:  "resume",
				Usage: "resume a paused loop (counters reset)",
				Flags: []cli.Flag{&cli.IntFlag{Name: "max-iterations", Usage: fmt.Sprintf("raise or lower the iteration limit (1..%d)", marker.MaxIterationsCeiling)}},
				Action: loopAction(func(c *cli.Context, p *loop.Controller) (loop.Result, error) {
					return p.Resume(c.Context, c.Int("max-iterations"), c.IsSet("max-iterations"))
				}),
			},
			{Name: "cancel", Usage: "end the loop and remove its marker", Action: loopAction(func(c *cli.Context, p *loop.Controller) (loop.Result, error) {
				return p.Cancel(c.Context)
			})},
			loopImportCommand(),
		},
	}
}

// loopShapeFlags are the flags that shape a loop, shared by start and import.
func loopShapeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-iterations", Value: marker.DefaultMaxIterations, Usage: fmt.Sprintf("iteration limit, 1..%d (never unlimited)", marker.MaxIterationsCeiling)},
		&cli.StringFlag{Name: "completion-promise", Usage: "the loop ends when the agent writes <promise>TEXT</promise> on a line of its own"},
		&cli.StringFlag{Name: "exit-strategy", Usage: "auto, fix_plan, done_signals, circuit_breaker, composite or composite:a,b"},
		&cli.StringFlag{Name: "fix-plan", Usage: "markdown checklist the fix_plan strategy reads (relative to the project root)"},
		&cli.StringFlag{Name: "advisor", Usage: "command (run with sh -c) that predicts the next prompt; reads JSON on stdin"},
		&cli.DurationFlag{Name: "advisor-timeout", Value: stophook.DefaultAdvisorTimeout,
			Usage: fmt.Sprintf("bound on one advisor call (at most %s, below the Stop hook's own timeout)", stophook.MaxAdvisorTimeout)},
		&cli.Float64Flag{Name: "threshold", Value: marker.DefaultThreshold, Usage: "advisor confidence (0..1] the loop trusts"},
		&cli.StringFlag{Name: "owner-session", Usage: "owning agent session (default $CLAUDE_CODE_SESSION_ID, then $CODEX_THREAD_ID)"},
		&cli.BoolFlag{Name: "replace", Usage: "replace an active or paused loop or story run"},
	}
}

// loopShape reads the shaping flags.
func loopShape(c *cli.Context) loop.Shape {
	return loop.Shape{
		MaxIterations: c.Int("max-iterations"), MaxIterationsSet: c.IsSet("max-iterations"),
		CompletionPromise: c.String("completion-promise"), CompletionPromiseSet: c.IsSet("completion-promise"),
		ExitStrategy: c.String("exit-strategy"), FixPlan: c.String("fix-plan"),
		Advisor: c.String("advisor"), AdvisorTimeout: c.Duration("advisor-timeout"), Threshold: c.Float64("threshold"),
		Owner: c.String("owner-session"), OwnerSet: c.IsSet("owner-session"), Replace: c.Bool("replace"),
	}
}

func loopController(c *cli.Context) *loop.Controller {
	e := envOf(c)
	return &loop.Controller{Store: markerStore(c), Root: e.ProjectRoot, Getenv: e.Getenv, Now: e.Now}
}

// loopAction wires a subcommand that takes no arguments to one loop call.
func loopAction(call func(c *cli.Context, p *loop.Controller) (loop.Result, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		return printLoop(c)(call(c, loopController(c)))
	}
}

// printLoop prints a loop result, or maps its error to the contract's failure.
func printLoop(c *cli.Context) func(loop.Result, error) error {
	return func(out loop.Result, err error) error {
		if err != nil {
			return markerFailure(err)
		}
		return cliio.OKJSON(envOf(c).Out, out)
	}
}

func loopStart(c *cli.Context) error {
	prompt, err := loop.Prompt(c.Args().Slice(), c.String("prompt-file"), envOf(c).In)
	if err != nil {
		return printLoop(c)(nil, err)
	}
	out, err := loopController(c).Start(c.Context, prompt, loopShape(c))
	if err == nil {
		out["sessionSandbox"] = sessionSandbox(envOf(c).Getenv)
	}
	return printLoop(c)(out, err)
}

// sessionSandbox says whether the agent session the loop drives (the one
// running this command) is confined by its CLI's sandbox, and how to turn
// it on: this tool does not start that session, but it can tell.
func sessionSandbox(getenv func(string) string) map[string]any {
	name, confined, known := agent.SessionSandbox(getenv)
	out := map[string]any{"agent": name, "confined": nil}
	p, _ := agent.LookupProfile(name)
	switch {
	case name == "":
		out["note"] = "not run from an agent session this tool knows: cannot tell whether it is sandboxed"
	case !known:
		out["note"] = fmt.Sprintf("%s sets nothing that tells whether its session is sandboxed; to be sure: %s", p.Product, p.Sandbox.TurnOn)
	case confined:
		out["confined"] = true
		out["note"] = p.Product + " session: sandboxed"
	default:
		out["confined"] = false
		out["note"] = fmt.Sprintf("%s session: NOT sandboxed — its commands can reach past the project; to turn it on: %s", p.Product, p.Sandbox.TurnOn)
	}
	return out
}
