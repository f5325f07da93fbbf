package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/status"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the project's run from any terminal: marker, stories and steps, live sessions, the last hook decision",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON (one object per refresh with --watch)"},
			&cli.BoolFlag{Name: "watch", Usage: "refresh until Ctrl-C or until the run is done"},
			&cli.DurationFlag{Name: "interval", Value: time.Second, Usage: "refresh interval of --watch"},
			&cli.BoolFlag{Name: "wait", Usage: "block, without polling, until the run is done, escalates, pauses or dies, then print what happened and the one next command (exit 0 done, 3 needs you, 4 its process died, 6 no run, 8 --return-after passed)"},
			&cli.DurationFlag{Name: "return-after", Value: defaultWaitBound, Usage: "with --wait: return after this long with exit 8 (the default fits under Claude Code's 2-minute Bash tool cap; 0 = no bound)"},
		},
		Action: statusAction,
	}
}

func statusAction(c *cli.Context) error {
	e := envOf(c)
	if c.Duration("interval") <= 0 {
		return coded.Usage("--interval must be positive")
	}
	if c.Bool("wait") {
		return statusWait(c, e)
	}
	if !c.Bool("watch") {
		return printStatus(e, collectStatus(e), false)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return status.Watch(ctx, c.Duration("interval"), func() status.View { return collectStatus(e) },
		func(v status.View) error { return printStatus(e, v, true) })
}

// liveSessions lists this project's child sessions on the tmux server of socket.
func liveSessions(e *runtimeEnv, socket string) ([]status.Session, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	sessions, warnings, err := child.Sessions{Tmux: tmux.New(socket), Root: e.ProjectRoot, Dir: sessionStateDir(e)}.List(ctx)
	warn(e, warnings)
	if err != nil {
		return []status.Session{}, nil
	}
	return status.LiveSessions(sessions), warnings
}

// collectStatus gathers the view for e's project; its live sessions are
// those on the socket given, else on the one the run recorded.
func collectStatus(e *runtimeEnv) status.View {
	none := func() ([]status.Session, []string) { return []status.Session{}, nil }
	v, st := status.Gather(e.ProjectRoot, e.Getenv, e.Now, e.Err, none)
	socket := e.TmuxSocket
	if socket == "" && st != nil {
		socket = st.Config.TmuxSocket
	}
	sessions, warnings := liveSessions(e, socket)
	v.Sessions, v.Warnings = append(sessions, status.RemoteSessions(st)...), append(v.Warnings, warnings...)
	return v
}
