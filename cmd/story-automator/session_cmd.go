package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
)

func init() { register(sessionCommand) }

func sessionCommand() *cli.Command {
	return &cli.Command{
		Name:  "session",
		Usage: "spawn, inspect, drive and stop child agent sessions in tmux",
		Subcommands: []*cli.Command{
			sessionSpawnCommand(),
			{Name: "list", Usage: "list story-automator sessions", Action: sessionList,
				Flags: []cli.Flag{&cli.BoolFlag{Name: "project-only", Usage: "only this project's sessions"}}},
			{Name: "status", Usage: "show a session's tmux and recorded state", ArgsUsage: "NAME", Action: sessionStatus},
			{Name: "capture", Usage: "print a session's screen (or the tail of its output file once it is gone)", ArgsUsage: "NAME",
				Flags: []cli.Flag{&cli.IntFlag{Name: "lines", Usage: "last N lines including scrollback (0 = the visible screen)"}}, Action: sessionCapture},
			sessionSendCommand(),
			{Name: "kill", Usage: "kill one session", ArgsUsage: "NAME", Action: sessionKill},
			{Name: "kill-all", Usage: "kill this project's sessions, or every project's", Action: sessionKillAll,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "project-only", Usage: "only this project's sessions"},
					&cli.BoolFlag{Name: "all-projects", Usage: "every story-automator session on the server"},
				}},
			{Name: "attach", Usage: "attach your terminal to a session", ArgsUsage: "NAME", Action: sessionAttach},
		},
	}
}

// sessionTmux is the tmux client for the configured socket.
func sessionTmux(e *runtimeEnv) *tmux.Client { return tmux.New(e.TmuxSocket) }

// sessionStateDir is the absolute directory of this project's session files.
func sessionStateDir(e *runtimeEnv) string {
	d := sessionstate.Dir(e.ProjectRoot, e.Getenv)
	if abs, err := filepath.Abs(d); err == nil {
		return abs
	}
	return d
}

// sessionName reads and checks the NAME argument.
func sessionName(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", cliio.UsageError("%s needs exactly one session NAME", c.Command.FullName())
	}
	name := c.Args().First()
	if !sessionstate.ValidName(name) {
		return "", cliio.UsageError("invalid session name %q: only letters, digits, '_' and '-'", name)
	}
	return name, nil
}

// tmuxFailure turns a tmux error into the JSON failure users see.
func tmuxFailure(err error) error {
	return cliio.Fail(tmux.Code(err), "%v", err)
}

func sessionList(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	sessions, warnings, err := childSessions(context.Background(), e)
	if err != nil {
		return tmuxFailure(err)
	}
	out := []map[string]any{}
	for _, s := range sessions {
		if !c.Bool("project-only") || s.Mine {
			out = append(out, s.Row())
		}
	}
	fields := map[string]any{"sessions": out}
	if len(warnings) > 0 {
		fields["warnings"] = warnings
	}
	return cliio.OKJSON(e.Out, fields)
}

// childSessions lists the tmux server's child sessions once each, sorted by
// name, warning about corrupt state files it moved aside.
func childSessions(ctx context.Context, e *runtimeEnv) ([]child.Listed, []string, error) {
	out, moved, err := child.ListSessions(ctx, sessionTmux(e), e.ProjectRoot, sessionStateDir(e))
	var warnings []string
	for _, m := range moved {
		warnings = append(warnings, movedAsideWarnings(e, m)...)
	}
	return out, warnings, err
}

// movedAsideWarnings tells the user, on stderr and as the JSON's warnings,
// about a corrupt session state that err says was moved aside.
func movedAsideWarnings(e *runtimeEnv, err error) []string {
	var moved *sessionstate.MovedAside
	if !errors.As(err, &moved) {
		return nil
	}
	msg := "session state " + moved.Error()
	fmt.Fprintf(e.Err, "story-automator: warning: %s\n", msg)
	return []string{msg}
}

func sessionStatus(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	exists, err := sessionTmux(e).HasSession(context.Background(), name)
	if err != nil {
		return tmuxFailure(err)
	}
	st, stErr := child.ReconciledSession(sessionStateDir(e), name)
	if stErr != nil && !errors.Is(stErr, marker.ErrNotFound) {
		return cliio.Fail("session_state_unreadable", "%v", stErr)
	}
	warnings := movedAsideWarnings(e, stErr)
	if !exists && st == nil {
		f := cliio.Fail("session_not_found", "no session %s on this tmux server and no recorded state", name)
		if len(warnings) > 0 {
			f.Fields = map[string]any{"warnings": warnings}
		}
		return f
	}
	fields := map[string]any{"session": name, "exists": exists}
	if len(warnings) > 0 {
		fields["warnings"] = warnings
	}
	if st != nil {
		fields["state"] = st
		fields["lifecycle"] = st.Lifecycle
		fields["outputFile"] = st.OutputFile
	}
	return cliio.OKJSON(e.Out, fields)
}

func sessionCapture(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	lines := c.Int("lines")
	if lines < 0 {
		return cliio.UsageError("--lines must not be negative")
	}
	e := envOf(c)
	text, err := sessionTmux(e).CapturePane(context.Background(), name, lines)
	if err == nil {
		return cliio.OKJSON(e.Out, map[string]any{"session": name, "source": "pane", "text": text})
	}
	if !errors.Is(err, tmux.ErrNoSession) && !errors.Is(err, tmux.ErrNoServer) {
		return tmuxFailure(err)
	}
	// The session is gone; its output file still has everything it printed.
	st, stErr := sessionstate.Read(sessionStateDir(e), name)
	if stErr != nil || st.OutputFile == "" {
		return cliio.Fail("session_not_found", "no session %s and no recorded output", name)
	}
	tail, err := monitor.OutputTail(st.OutputFile, lines)
	if err != nil {
		return cliio.Fail("output_unreadable", "%v", err)
	}
	return cliio.OKJSON(e.Out, map[string]any{"session": name, "source": "outputFile", "outputFile": st.OutputFile, "text": tail})
}

func sessionKill(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	if err := sessionTmux(e).KillSession(context.Background(), name); err != nil {
		if errors.Is(err, tmux.ErrNoServer) {
			return cliio.Fail("session_not_found", "no session %s: no tmux server", name)
		}
		return tmuxFailure(err)
	}
	return cliio.OKJSON(e.Out, map[string]any{"session": name, "killed": true})
}

func sessionKillAll(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	project, all := c.Bool("project-only"), c.Bool("all-projects")
	if project == all {
		return cliio.UsageError("session kill-all needs exactly one of --project-only or --all-projects")
	}
	e := envOf(c)
	tc := sessionTmux(e)
	ctx := context.Background()
	sessions, _, err := childSessions(ctx, e)
	if err != nil {
		return tmuxFailure(err)
	}
	scope := "project"
	if all {
		scope = "all-projects"
	}
	killed, err := child.KillAll(ctx, tc, sessions, all)
	if err != nil {
		return tmuxFailure(err)
	}
	return cliio.OKJSON(e.Out, map[string]any{"scope": scope, "killed": killed})
}

func sessionAttach(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	in := e.In
	if in == nil {
		in = os.Stdin
	}
	if err := sessionTmux(e).Attach(context.Background(), name, &tmux.Terminal{In: in, Out: cliio.RawOut(e.Out), Err: e.Err}); err != nil {
		return tmuxFailure(err)
	}
	return nil
}
