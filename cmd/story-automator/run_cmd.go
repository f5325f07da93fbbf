package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/orchestrator/wire"
	"github.com/story-automator/story-automator/tmux"
)

// runCommand is `run` with its real action.
func runCommand() *cli.Command { return newRunCommand(runAction) }

// newRunCommand is `run`: its flags fill a runOptions, which is validated
// and handed to run (runAction; tests pass their own).
func newRunCommand(run func(c *cli.Context, o *runOptions) error) *cli.Command {
	def := monitor.DefaultOptions()
	o := &runOptions{}
	return &cli.Command{
		Name:  "run",
		Usage: "work through the selected stories on their own: create → dev → automate → review → commit, every step verified",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "epic", Destination: &o.Epic, Usage: "only stories of this epic"},
			&cli.StringFlag{Name: "stories", Destination: &o.Stories, Value: "all", Usage: "all, numbers and ranges within the epic (1-3, 1,3,5) or keys (1.2, auth-3)"},
			&cli.StringFlag{Name: "agent", Destination: &o.Agent, Value: agent.DefaultAgent(), Usage: agent.OrList(agent.RunAgents())},
			&cli.StringFlag{Name: "fallback-agent", Destination: &o.FallbackAgent, Usage: "agent of every other retry (default: the primary agent again)"},
			&cli.StringSliceFlag{Name: "model", Destination: &o.Models, Usage: "model of every step's agent, or STEP=MODEL for one step (repeatable; default: workflow.yaml's steps.<step>.model, else the agent's own)"},
			&cli.Float64Flag{Name: "max-cost", Destination: &o.MaxCost, Usage: "pause the run (run_budget_exceeded) once its agents have cost this many US dollars"},
			&cli.Int64Flag{Name: "max-tokens", Destination: &o.MaxTokens, Usage: "pause the run once its agents have used this many tokens (input, output, cache read and write)"},
			&cli.DurationFlag{Name: "max-duration", Destination: &o.MaxDuration, Usage: "pause the run once it has been running this long (pauses not counted)"},
			&cli.DurationFlag{Name: "max-wait", Destination: &o.MaxWait, Usage: "longest wait for an agent's usage or rate limit to lift before the run escalates with usage_limit, at least 1m (default: workflow.yaml's maxWait, else 6h)"},
			&cli.IntFlag{Name: "parallel", Destination: &o.Parallel, Value: 1, Usage: "stories run side by side (declared dependencies respected)"},
			&cli.StringSliceFlag{Name: "host", Destination: &o.Hosts, Usage: "run stories only on this host of workflow.yaml's hosts (local, or a name; repeatable); default: every enabled host"},
			&cli.StringFlag{Name: "isolate", Destination: &o.Isolate, Usage: "worktree: each story in its own git worktree under .git/story-automator/worktrees, its commit landed on your branch in dependency order; none: all stories in the project's tree, on this machine (default: worktree when --parallel > 1 or workflow hosts take stories)"},
			&cli.BoolFlag{Name: "resume", Destination: &o.Resume, Usage: "continue the paused or interrupted run from its state document"},
			&cli.BoolFlag{Name: "dry-run", Destination: &o.DryRun, Usage: "print the plan (stories, waves, hosts, what a limit does, warnings) and change nothing"},
			&cli.BoolFlag{Name: "json", Destination: &o.JSON, Usage: "one JSON object per event, then the result"},
			&cli.IntFlag{Name: "max-cycles", Destination: &o.MaxCycles, Usage: "review cycles before escalating (default: the workflow policy's)"},
			&cli.DurationFlag{Name: "backoff", Destination: &o.Backoff, Usage: "wait before a step's first retry, doubled after (default: the workflow policy's)"},
			&cli.IntFlag{Name: "completion-rechecks", Destination: &o.CompletionRechecks, Value: def.Rechecks, Usage: "verifications of a finished step before it counts as unverified"},
			&cli.DurationFlag{Name: "recheck-grace", Destination: &o.RecheckGrace, Value: def.RecheckGrace, Usage: "time between those verifications"},
			&cli.StringFlag{Name: "sandbox", Destination: &o.Sandbox, Value: orchestrator.SandboxOn, Usage: sandboxUsage},
			&cli.BoolFlag{Name: "plan-checkpoint", Destination: &o.PlanCheckpoint, Usage: "build-auto pipeline: pause each story after its planning, naming its spec, for you to review the plan; run --resume implements it (also workflow.yaml's planCheckpoint)"},
			&cli.StringFlag{Name: "spec", Destination: &o.Spec, Usage: "BMAD 6.12 stories mode: run the stories of this spec folder's stories.yaml (relative to the project, or absolute), one at a time in its order (default: the one spec folder with a stories.yaml, when there is no sprint board)"},
			&cli.StringFlag{Name: "replan", Destination: &o.Replan, Usage: "with --resume: set this story's spec back to draft, so that the worker plans it again (stories mode: the story's id)"},
			&cli.BoolFlag{Name: "sweep", Destination: &o.Sweep, Usage: "build-auto pipeline: instead of stories, fix the open items of deferred-work.md (`story-automator deferred` lists them), one unit per source spec, each landing as one commit that marks its items done"},
			&cli.StringFlag{Name: "min-severity", Destination: &o.MinSeverity, Usage: "with --sweep: only items of at least this severity (low, medium, high)"},
			&cli.StringSliceFlag{Name: "only", Destination: &o.Only, Usage: "with --sweep: only these item ids (ID,…; repeatable)"},
			&cli.BoolFlag{Name: "action-items", Destination: &o.ActionItems, Usage: "build-auto pipeline: instead of stories, carry out the board's open retrospective action items, each moved open → in-progress → done"},
			&cli.StringFlag{Name: "on-escalation", Destination: &o.OnEscalation, Usage: "park: a story whose escalation needs a person (a blocking condition, a dialog about its folder, a merge conflict, out of retries) is parked with its work kept on refs/story-automator/parked/RUN/STORY, the stories that do not depend on it go on, and the run ends done_with_parked (exit 10); pause: any escalation pauses the run (default: the run's recorded one, else workflow.yaml's onEscalation, else park)"},
			&cli.BoolFlag{Name: "trust-project", Destination: &o.TrustProject, Usage: "answer the agent CLI's \"trust this folder?\" for the project folder (the one you run in) as you would; never the bypass warning or an API key"},
		},
		Action: func(c *cli.Context) error {
			o.IsSet = c.IsSet
			if err := o.validate(); err != nil {
				return err
			}
			return run(c, o)
		},
	}
}

// runAction wires the run's adapters, runs it and prints its progress and result.
func runAction(c *cli.Context, o *runOptions) error {
	opts := o.orchestratorOptions()
	e := envOf(c)
	opts.ProjectRoot = e.ProjectRoot
	// A new run records the socket given; a resumed one goes back to its own
	// unless another is given.
	opts.TmuxSocket = e.TmuxSocket
	socket := e.TmuxSocket
	if o.Resume {
		socket = projectSocket(e)
	}
	opts, deps, err := wire.Build(context.Background(), opts, wire.Process{Getenv: e.Getenv, Environ: e.Environ(),
		Exe: e.Exe, Tmux: tmux.New(socket), SessionDir: sessionStateDir(e), Now: e.Now, Log: e.Log, Version: buildinfo.Version(version)})
	if err != nil {
		return runFailure(err)
	}
	out := newRunOutput(e, o.JSON)
	out.policy = opts.Policy
	deps.Report = out.reporter
	deps.ActionLog = &orchestrator.ActionLog{}
	var notifier *runNotifier // a dry run sends nothing, and approves nothing
	if !o.DryRun {
		notifier = newRunNotifier(e, out.reporter, deps.ActionLog, !o.Resume)
	}
	if notifier != nil {
		deps.Report = notifier.rep
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // a second Ctrl-C ends the process at once
		<-ctx.Done()
		stop()
	}()
	out.start()
	res, err := orchestrator.Run(ctx, opts, deps)
	endLostChildren(e, deps)
	out.stop()
	notifier.end(res, err)
	return out.finish(res, err)
}

// endLostChildren ends, at the run's end, the children left on hosts the
// run declared lost that answer again by now (a minute at most); those
// still unreachable are logged with their host.
func endLostChildren(e *runtimeEnv, deps orchestrator.Deps) {
	steps, ok := deps.Steps.(*tmuxsteps.Runner)
	if !ok || len(steps.Remotes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for host, names := range steps.EndLostChildren(ctx) {
		e.Log.Warn().Str("host", host).Strs("sessions", names).
			Msg("children left on a lost host may still run there: story-automator session kill NAME on that host ends them")
	}
}
