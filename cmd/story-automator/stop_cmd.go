package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/orchestrator"
)

// stopCommand is the command line's twin of the dashboard's stop key: both
// call orchestrator.StopRun.
func stopCommand() *cli.Command {
	return &cli.Command{
		Name: "stop",
		Usage: "stop the project's running run as Ctrl-C in its terminal does: its child sessions end, their attempts are " +
			"recorded interrupted and the run pauses, for `run --resume`; waits until its process has gone",
		Flags: []cli.Flag{&cli.DurationFlag{Name: "timeout", Value: time.Minute,
			Usage: "how long to wait for the run's process to go (0 = do not wait)"}},
		Action: stopAction,
	}
}

func stopAction(c *cli.Context) error {
	e := envOf(c)
	if c.Duration("timeout") < 0 {
		return coded.Usage("--timeout must not be negative (0 = do not wait), e.g. --timeout 2m")
	}
	pid, err := orchestrator.StopRun(e.ProjectRoot, e.Getenv)
	if errors.Is(err, orchestrator.ErrNotRunning) {
		return coded.Fail("no_run", "no run is running in %s", e.ProjectRoot).
			WithAction("`story-automator status` shows the project's run; a paused or interrupted run has nothing to stop")
	}
	if err != nil {
		return coded.Fail("stop_failed", "%v", err)
	}
	fields := map[string]any{"pid": pid, "next": orchestrator.ResumeCommand}
	if d := c.Duration("timeout"); d > 0 {
		if !processGone(c.Context, pid, d) {
			return coded.Fail("stop_timeout", "the run (pid %d) was asked to stop but is still going after %s", pid, d).
				WithAction("wait a little and run `story-automator status`; `kill %d` ends it at once (its children are then left to `run --resume`)", pid)
		}
		fields["stopped"] = true
	}
	text := func(w io.Writer) {
		if fields["stopped"] == true {
			fmt.Fprintf(w, "Stopped the run (pid %d): its children ended and it is paused.\nNext: %s\n", pid, orchestrator.ResumeCommand)
			return
		}
		fmt.Fprintf(w, "Asked the run (pid %d) to stop: its children end and it pauses.\nNext: %s\n", pid, orchestrator.ResumeCommand)
	}
	return cliio.Emit(e.Out, cliio.OK(fields), text)
}

// processGone waits, on the kernel's word, until pid has exited or d passes.
func processGone(ctx context.Context, pid int, d time.Duration) bool {
	w := wake.New()
	defer w.Close()
	if err := w.Process(pid); err != nil {
		return !proc.Alive(pid)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		if !proc.Alive(pid) {
			return true
		}
		select {
		case <-w.C:
		case <-timer.C:
			return !proc.Alive(pid)
		case <-ctx.Done():
			return false
		}
	}
}
