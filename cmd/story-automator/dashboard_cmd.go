package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/dashboard"
	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/remotesession"
)

func dashboardCommand() *cli.Command {
	return &cli.Command{
		Name:    "dashboard",
		Aliases: []string{"dash"},
		Usage:   "the full-screen view of the project's run: stories × steps (sweep and action units too), attempts, parked stories, the working child's live pane, runs, loops, deferred work, the board's action items; attach, pause, resume, stop and resolve on a key",
		Action:  dashboardAction,
	}
}

// dashboardAction runs the dashboard on the terminal until it is quit or
// the process is told to stop; its resume key runs this binary.
func dashboardAction(c *cli.Context) error {
	if err := cliapp.NoArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	exe, err := e.Exe()
	if err != nil {
		return fmt.Errorf("find story-automator's own path: %w", err)
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// Children on ssh hosts are read over one kept connection per host (the
	// run's own, while it is open); one the dashboard opened ends with it.
	pool := &remotesession.Pool{Root: e.ProjectRoot, Getenv: e.Getenv}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pool.Close(ctx)
	}()
	src := dashboard.Source{Root: e.ProjectRoot, Getenv: e.Getenv, Socket: e.TmuxSocket, Now: e.Now, Hosts: pool}
	ctl := dashboard.Controls{Root: e.ProjectRoot, Getenv: e.Getenv, Exe: exe, Environ: e.Environ()}
	if err := dashboard.Run(ctx, src, ctl, dashboard.SystemTerminal()); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
