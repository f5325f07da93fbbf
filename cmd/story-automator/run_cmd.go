package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/stophook"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

func init() { register(runCommand) }

func runCommand() *cli.Command {
	def := monitor.DefaultOptions()
	return &cli.Command{
		Name:  "run",
		Usage: "work through the selected stories on their own: create → dev → automate → review → commit, every step verified",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "epic", Usage: "only stories of this epic"},
			&cli.StringFlag{Name: "stories", Value: "all", Usage: "all, numbers and ranges within the epic (1-3, 1,3,5) or keys (1.2, auth-3)"},
			&cli.StringFlag{Name: "agent", Value: child.AgentClaude, Usage: "claude, codex, gemini or sim"},
			&cli.StringFlag{Name: "fallback-agent", Usage: "agent of every other retry (default: the primary agent again)"},
			&cli.StringSliceFlag{Name: "model", Usage: "model of every step's agent, or STEP=MODEL for one step (repeatable; default: workflow.yaml's steps.<step>.model, else the agent's own)"},
			&cli.Float64Flag{Name: "max-cost", Usage: "pause the run (run_budget_exceeded) once its agents have cost this many US dollars"},
			&cli.Int64Flag{Name: "max-tokens", Usage: "pause the run once its agents have used this many tokens (input, output, cache read and write)"},
			&cli.DurationFlag{Name: "max-duration", Usage: "pause the run once it has been running this long (pauses not counted)"},
			&cli.IntFlag{Name: "parallel", Value: 1, Usage: "stories run side by side (declared dependencies respected)"},
			&cli.StringFlag{Name: "isolate", Usage: "worktree: each story in its own git worktree under .git/story-automator/worktrees, its commit landed on your branch in dependency order; none: all stories in the project's tree (default: worktree when --parallel > 1)"},
			&cli.BoolFlag{Name: "resume", Usage: "continue the paused or interrupted run from its state document"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and change nothing"},
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per event, then the result"},
			&cli.IntFlag{Name: "max-cycles", Usage: "review cycles before escalating (default: the workflow policy's)"},
			&cli.DurationFlag{Name: "backoff", Usage: "wait before a step's first retry, doubled after (default: the workflow policy's)"},
			&cli.IntFlag{Name: "completion-rechecks", Value: def.Rechecks, Usage: "verifications of a finished step before it counts as unverified"},
			&cli.DurationFlag{Name: "recheck-grace", Value: def.RecheckGrace, Usage: "time between those verifications"},
			&cli.BoolFlag{Name: "trust-project", Usage: "answer the agent CLI's \"trust this folder?\" for the project folder (the one you run in) as you would; never the bypass warning or an API key"},
		},
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	opts, err := orchestrator.FromFlags(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	proj, err := workflows.Open(e.ProjectRoot)
	if err != nil {
		return cliio.Fail(workflows.Code(err), "%v", err)
	}
	wpol, err := workflows.LoadPolicy(e.ProjectRoot)
	if err != nil {
		return cliio.Fail(workflows.Code(err), "%v", err)
	}
	exe, err := e.Exe()
	if err != nil {
		return cliio.Fail("run_failed", "cannot find this binary: %v", err)
	}
	opts.ProjectRoot, opts.Pid, opts.Getenv, opts.Policy = e.ProjectRoot, os.Getpid(), e.Getenv, orchestrator.PolicyFrom(wpol)
	if !opts.DryRun {
		if err := sessionTmux(e).CheckVersion(context.Background()); err != nil {
			return tmuxFailure(err)
		}
	}
	out := newRunOutput(e, c.Bool("json"))
	steps := runSteps(e, proj, wpol, exe)
	steps.TrustProject = opts.TrustProject
	deps := orchestrator.Deps{Project: orchestrator.BMADProject{P: proj}, Steps: steps,
		Repo: &orchestrator.Git{Root: e.ProjectRoot, StatePaths: statePaths(e)}, Clock: orchestrator.SystemClock{},
		Report: out.reporter, Log: e.Log}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // a second Ctrl-C ends the process at once
		<-ctx.Done()
		stop()
	}()
	out.start()
	res, err := orchestrator.Run(ctx, opts, deps)
	out.stop()
	return out.finish(res, err)
}

// runSteps is the real step runner: child sessions in tmux, watched by the monitor.
func runSteps(e *runtimeEnv, proj *workflows.Project, wpol *workflows.Policy, exe string) *orchestrator.TmuxSteps {
	// Model and the monitor's rechecks come from the run's configuration (Configure).
	return &orchestrator.TmuxSteps{Tmux: sessionTmux(e), Exe: exe, Environ: e.Environ(), Project: proj, Policy: wpol,
		StateDir: sessionStateDir(e), Monitor: monitor.DefaultOptions(), Now: e.Now}
}

// statePaths are the files story-automator writes inside the project,
// relative to its root: never committed, listed in .git/info/exclude. The
// rest of .story-automator/ (workflow.yaml, prompts/) is the user's and stays
// visible to git.
func statePaths(e *runtimeEnv) []string {
	dir := orchestrator.StateDirName + "/"
	// sprint-status.lock is the lock workflows takes around sprint-status.yaml edits.
	paths := []string{dir + "runs/", dir + "run.lock", dir + "sprint-status.lock"}
	store := marker.NewStore(e.ProjectRoot, e.Getenv)
	// The marker's temp files (".<marker>.tmp-<digits>") too: a kill mid-write leaves one until the next run sweeps it.
	markerTemps := filepath.Join(store.Dir(), "."+filepath.Base(store.Path)+".tmp-*")
	for _, p := range []string{store.Path, store.LockPath(), markerTemps, filepath.Join(store.Dir(), stophook.HistoryFile), sessionStateDir(e) + "/"} {
		rel, err := filepath.Rel(e.ProjectRoot, strings.TrimSuffix(p, "/"))
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		if strings.HasSuffix(p, "/") {
			rel += "/"
		}
		paths = append(paths, filepath.ToSlash(rel))
	}
	return paths
}

// runFailure turns a run error into the failure users see.
func runFailure(err error) *cliio.Failure {
	var f *cliio.Failure
	if errors.As(err, &f) {
		return f
	}
	if b, ok := orchestrator.AsBlocker(err); ok {
		f := cliio.Fail(b.Code, "%v", err)
		f.Fields = map[string]any{"action": b.Action}
		return f
	}
	if code := workflows.Code(err); code != "workflow_io" {
		return cliio.Fail(code, "%v", err)
	}
	return cliio.Fail(orchestrator.Code(err), "%v", err)
}
