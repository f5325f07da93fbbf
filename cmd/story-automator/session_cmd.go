package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
)

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
				Flags: []cli.Flag{&cli.IntFlag{Name: "lines", Usage: "last N lines including scrollback (0 = the visible screen)"},
					&cli.BoolFlag{Name: "colors", Usage: "keep the screen's colours and attributes as escape sequences (as the dashboard shows the pane)"}},
				Action: sessionCapture},
			sessionSendCommand(),
			sessionUsageCommand(),
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

// sessionTmux is the tmux client of the project's sessions: the socket
// given (--tmux-socket, STORY_AUTOMATOR_TMUX_SOCKET), else the one the
// project's latest run recorded, else the default server.
func sessionTmux(e *runtimeEnv) *tmux.Client { return tmux.New(projectSocket(e)) }

// projectSocket is the tmux socket sessionTmux uses.
func projectSocket(e *runtimeEnv) string {
	if e.TmuxSocket != "" {
		return e.TmuxSocket
	}
	return orchestrator.RecordedTmuxSocket(e.ProjectRoot, e.Getenv)
}

// sessionStateDir is the directory of this project's session files
// (absolute: the project root is).
func sessionStateDir(e *runtimeEnv) string { return sessionstate.Dir(e.ProjectRoot, e.Getenv) }

// projectSessions is this project's child sessions on the configured server.
func projectSessions(e *runtimeEnv) child.Sessions {
	return child.Sessions{Tmux: sessionTmux(e), Root: e.ProjectRoot, Dir: sessionStateDir(e)}
}

// sessionName reads and checks the NAME argument.
func sessionName(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", coded.Usage("%s needs exactly one session NAME", c.Command.FullName())
	}
	name := c.Args().First()
	if !sessionstate.ValidName(name) {
		return "", coded.Usage("invalid session name %q: only letters, digits, '_' and '-'", name)
	}
	return name, nil
}

// tmuxFailure turns a tmux error into the JSON failure users see.
func tmuxFailure(err error) error {
	return coded.Fail(tmux.Code(err), "%v", err)
}

// warn prints warnings on stderr.
func warn(e *runtimeEnv, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(e.Err, "story-automator: warning: %s\n", w)
	}
}

// warned prints warnings on stderr and adds them to fields, when there are any.
func warned(e *runtimeEnv, fields map[string]any, warnings []string) map[string]any {
	warn(e, warnings)
	if len(warnings) > 0 {
		fields["warnings"] = warnings
	}
	return fields
}

func sessionList(c *cli.Context) error {
	e := envOf(c)
	sessions, warnings, err := projectSessions(e).List(c.Context)
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, s := range sessions {
		if !c.Bool("project-only") || s.Mine {
			out = append(out, s.Row())
		}
	}
	return cliio.OKJSON(e.Out, warned(e, map[string]any{"sessions": out}, warnings))
}

func sessionStatus(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	st, err := projectSessions(e).Status(c.Context, name)
	fields := warned(e, map[string]any{"session": name, "exists": st.Exists}, st.Warnings)
	if err != nil {
		return err
	}
	if st.State != nil {
		fields["state"], fields["lifecycle"], fields["outputFile"] = st.State, st.State.Lifecycle, st.State.OutputFile
	}
	return cliio.OKJSON(e.Out, fields)
}

func sessionCapture(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	if c.Int("lines") < 0 {
		return coded.Usage("--lines must not be negative")
	}
	e := envOf(c)
	capture := projectSessions(e).Capture
	if c.Bool("colors") {
		capture = projectSessions(e).CaptureColors
	}
	got, err := capture(c.Context, name, c.Int("lines"))
	if err != nil {
		// A child of the run on an ssh host: its host shows it.
		if handled, rerr := remoteCapture(c.Context, e, name, c.Int("lines"), c.Bool("colors")); handled {
			return rerr
		}
		return err
	}
	fields := map[string]any{"session": name, "source": got.Source, "text": got.Text}
	if got.OutputFile != "" {
		fields["outputFile"] = got.OutputFile
	}
	return cliio.OKJSON(e.Out, fields)
}

func sessionKill(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	if err := projectSessions(e).Kill(c.Context, name); err != nil {
		return err
	}
	return cliio.OKJSON(e.Out, map[string]any{"session": name, "killed": true})
}

func sessionKillAll(c *cli.Context) error {
	project, all := c.Bool("project-only"), c.Bool("all-projects")
	if project == all {
		return coded.Usage("session kill-all needs exactly one of --project-only or --all-projects")
	}
	e := envOf(c)
	killed, warnings, err := projectSessions(e).KillAll(c.Context, all)
	warn(e, warnings)
	if err != nil {
		return err
	}
	scope := map[bool]string{false: "project", true: "all-projects"}[all]
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
	err = sessionTmux(e).Attach(c.Context, name, &tmux.Terminal{In: in, Out: cliio.RawOut(e.Out), Err: e.Err})
	if errors.Is(err, tmux.ErrNoSession) || errors.Is(err, tmux.ErrNoServer) {
		// A child of the run on an ssh host: attach there.
		if handled, rerr := remoteAttach(c.Context, e, name, in); handled {
			return rerr
		}
	}
	if err != nil {
		return tmuxFailure(err)
	}
	return nil
}
