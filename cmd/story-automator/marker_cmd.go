package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/tmux/child"
)

func markerCommand() *cli.Command {
	return &cli.Command{
		Name:  "marker",
		Usage: "create, inspect and change the run marker that drives the Stop hook",
		Subcommands: []*cli.Command{
			{
				Name:  "create",
				Usage: "create the marker for a run (refuses to replace an active one without --force)",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "epic", Usage: "the epic being worked on"},
					&cli.StringFlag{Name: "story", Usage: "the current story (e.g. 1.2)"},
					&cli.StringFlag{Name: "step", Usage: "the current step (create, dev, automate, review, commit, retro)"},
					&cli.IntFlag{Name: "remaining", Usage: "stories not yet done"},
					&cli.StringFlag{Name: "state-file", Usage: "the run's state document"},
					&cli.StringFlag{Name: "project-slug", Usage: "short project name recorded in the marker"},
					&cli.StringFlag{Name: "owner-session", Usage: "owning agent session (default $CLAUDE_CODE_SESSION_ID, then $CODEX_THREAD_ID)"},
					&cli.IntFlag{Name: "pid", Usage: "pid of a long-lived orchestrator process"},
					&cli.StringFlag{Name: "mode", Value: marker.ModeStory, Usage: "story or loop"},
					&cli.BoolFlag{Name: "force", Usage: "replace an existing active or corrupt marker"},
				},
				Action: markerCreate,
			},
			{
				Name:  "heartbeat",
				Usage: "record verified progress",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "story", Usage: "the story now being worked on"},
					&cli.StringFlag{Name: "step", Usage: "the step now being worked on"},
					&cli.IntFlag{Name: "remaining", Usage: "stories not yet done (unchanged when not given)"},
				},
				Action: markerChange(markerHeartbeat),
			},
			{Name: "show", Usage: "print the marker", Action: markerShow},
			{
				Name:   "pause",
				Usage:  "pause the run: the Stop hook stops guarding it",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "reason", Usage: "why the run is paused (shown by status)"}},
				Action: markerPause,
			},
			{Name: "resume", Usage: "resume a paused run", Action: markerChange(markerResume)},
			{
				Name:   "claim",
				Usage:  "make an agent session the owner of the run",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "owner-session", Usage: "the new owner (default $CLAUDE_CODE_SESSION_ID, then $CODEX_THREAD_ID)"}},
				Action: markerChange(markerClaim),
			},
			{Name: "remove", Usage: "delete the marker", Action: markerRemove},
		},
	}
}

// markerFailure turns a marker error into the JSON failure users see; a
// coded error keeps its own code.
func markerFailure(err error) error {
	if f := (*coded.Error)(nil); errors.As(err, &f) {
		return err
	}
	return coded.Fail(marker.Code(err), "%v", err)
}

func markerStore(c *cli.Context) *marker.Store {
	e := envOf(c)
	return marker.NewStore(e.ProjectRoot, e.Getenv)
}

func markerCreate(c *cli.Context) error {
	e := envOf(c)
	owner, claim := child.MarkerOwner(c.String("owner-session"), c.IsSet("owner-session"), e.Getenv)
	m, err := marker.New(marker.Spec{Mode: c.String("mode"),
		Epic: c.String("epic"), Story: c.String("story"), Step: c.String("step"),
		Remaining: c.Int("remaining"), RemainingSet: c.IsSet("remaining"),
		StateFile: c.String("state-file"), ProjectSlug: c.String("project-slug"), Owner: owner, Pid: c.Int("pid"),
		ClaimOnStop: claim,
	}, e.Now())
	if err != nil {
		return coded.Usage("%v", err)
	}
	st := markerStore(c)
	out, err := st.Create(c.Context, m, c.Bool("force"))
	if err != nil {
		return markerFailure(err)
	}
	return cliio.OKJSON(e.Out, map[string]any{"path": st.Path, "marker": out})
}

// markerChange wires a subcommand that changes the marker under its lock:
// change reads the flags and returns the change to make.
func markerChange(change func(c *cli.Context) (func(*marker.Marker), error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		fn, err := change(c)
		if err != nil {
			return err
		}
		st := markerStore(c)
		m, err := st.Modify(c.Context, func(m *marker.Marker) error { fn(m); return nil })
		if err != nil {
			return markerFailure(err)
		}
		return cliio.OKJSON(envOf(c).Out, map[string]any{"path": st.Path, "marker": m})
	}
}

func markerHeartbeat(c *cli.Context) (func(*marker.Marker), error) {
	var p marker.Progress
	if c.IsSet("remaining") {
		n := c.Int("remaining")
		if n < 0 {
			return nil, coded.Usage("--remaining must not be negative")
		}
		p.Remaining = &n
	}
	if c.IsSet("story") {
		p.Story = ptr(c.String("story"))
	}
	if c.IsSet("step") {
		p.Step = ptr(c.String("step"))
	}
	return func(m *marker.Marker) { m.Beat(p, envOf(c).Now()) }, nil
}

func ptr[T any](v T) *T { return &v }

func markerPause(c *cli.Context) error {
	st := markerStore(c)
	m, err := st.Pause(c.Context, c.String("reason"))
	if err != nil {
		return markerFailure(err)
	}
	return cliio.OKJSON(envOf(c).Out, map[string]any{"path": st.Path, "marker": m})
}

func markerResume(*cli.Context) (func(*marker.Marker), error) {
	return (*marker.Marker).Resume, nil
}

func markerClaim(c *cli.Context) (func(*marker.Marker), error) {
	owner := c.String("owner-session")
	if owner == "" {
		owner = agent.AgentSessionID(envOf(c).Getenv)
	}
	if owner == "" {
		return nil, coded.Usage("no session to claim for: pass --owner-session or run inside an agent session ($CLAUDE_CODE_SESSION_ID / $CODEX_THREAD_ID)")
	}
	return func(m *marker.Marker) { m.Claim(owner) }, nil
}

func markerShow(c *cli.Context) error {
	e := envOf(c)
	st := markerStore(c)
	m, err := st.Read()
	if errors.Is(err, marker.ErrNotFound) {
		return cliio.OKJSON(e.Out, map[string]any{"exists": false, "path": st.Path})
	}
	if err != nil {
		f := coded.Fail(marker.Code(err), "%v", err)
		f.Fields = map[string]any{"exists": true, "path": st.Path}
		return f
	}
	return cliio.OKJSON(e.Out, map[string]any{"exists": true, "path": st.Path, "marker": m})
}

func markerRemove(c *cli.Context) error {
	st := markerStore(c)
	existed, err := st.Remove(c.Context)
	if err != nil {
		return markerFailure(err)
	}
	return cliio.OKJSON(envOf(c).Out, map[string]any{"path": st.Path, "removed": existed})
}
