package child

import (
	"context"
	"errors"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
)

// Sessions is one project's child sessions on one tmux server: what the
// session commands and status list, inspect, capture and kill. Its errors
// are coded (internal/coded) with the contract's codes.
type Sessions struct {
	Tmux *tmux.Client
	Root string // the project root
	Dir  string // its session state directory
}

// List lists the server's child sessions (see ListSessions), with a
// warning for each corrupt state file moved aside on the way.
func (p Sessions) List(ctx context.Context) ([]Listed, []string, error) {
	out, moved, err := ListSessions(ctx, p.Tmux, p.Root, p.Dir)
	var warnings []string
	for _, m := range moved {
		warnings = append(warnings, movedAside(m)...)
	}
	return out, warnings, tmuxError(err)
}

// Status is what is known of one session: whether tmux has it, and its
// recorded state (settled as lost when its runner is gone).
type Status struct {
	Exists   bool
	State    *sessionstate.State
	Warnings []string
}

// Status looks one session up on the server and in the state directory.
func (p Sessions) Status(ctx context.Context, name string) (Status, error) {
	var s Status
	var err error
	if s.Exists, err = p.Tmux.HasSession(ctx, name); err != nil {
		return s, tmuxError(err)
	}
	st, stErr := ReconciledSession(p.Dir, name)
	if stErr != nil && !errors.Is(stErr, marker.ErrNotFound) {
		return s, coded.Fail("session_state_unreadable", "%v", stErr)
	}
	s.State, s.Warnings = st, movedAside(stErr)
	if !s.Exists && st == nil {
		e := coded.Fail("session_not_found", "no session %s on this tmux server and no recorded state", name)
		if len(s.Warnings) > 0 {
			e.Fields = map[string]any{"warnings": s.Warnings}
		}
		return s, e
	}
	return s, nil
}

// Capture is a session's screen, or the tail of its output file once the
// session is gone (Source "pane" or "outputFile").
type Capture struct {
	Source, OutputFile, Text string
}

// Capture reads the last lines of a session's screen with its scrollback
// (0: the visible screen); a session that is gone is read from its output
// file, which still has everything it printed.
func (p Sessions) Capture(ctx context.Context, name string, lines int) (Capture, error) {
	return p.capture(ctx, name, lines, p.Tmux.CapturePane)
}

// CaptureColors is Capture with the screen's colours and attributes kept
// as escape sequences, as a viewer shows the pane.
func (p Sessions) CaptureColors(ctx context.Context, name string, lines int) (Capture, error) {
	return p.capture(ctx, name, lines, p.Tmux.CapturePaneColors)
}

func (p Sessions) capture(ctx context.Context, name string, lines int, read func(context.Context, string, int) (string, error)) (Capture, error) {
	text, err := read(ctx, name, lines)
	if err == nil {
		return Capture{Source: "pane", Text: text}, nil
	}
	if !errors.Is(err, tmux.ErrNoSession) && !errors.Is(err, tmux.ErrNoServer) {
		return Capture{}, tmuxError(err)
	}
	st, stErr := sessionstate.Read(p.Dir, name)
	if stErr != nil || st.OutputFile == "" {
		return Capture{}, coded.Fail("session_not_found", "no session %s and no recorded output", name)
	}
	tail, err := sessionstate.OutputTail(st.OutputFile, lines)
	if err != nil {
		return Capture{}, coded.Fail("output_unreadable", "%v", err)
	}
	return Capture{Source: "outputFile", OutputFile: st.OutputFile, Text: tail}, nil
}

// Kill kills one session.
func (p Sessions) Kill(ctx context.Context, name string) error {
	err := p.Tmux.KillSession(ctx, name)
	if errors.Is(err, tmux.ErrNoServer) {
		return coded.Fail("session_not_found", "no session %s: no tmux server", name)
	}
	return tmuxError(err)
}

// KillAll kills this project's sessions, or every child session on the
// server when all, and returns their names sorted, with the warnings of the
// listing (see List).
func (p Sessions) KillAll(ctx context.Context, all bool) (killed, warnings []string, err error) {
	sessions, warnings, err := p.List(ctx)
	if err != nil {
		return nil, warnings, err
	}
	killed, err = KillAll(ctx, p.Tmux, sessions, all)
	return killed, warnings, tmuxError(err)
}

// SpawnFailure codes an error of Spawner.Spawn: a tmux error with its own
// code (tmux.Code), anything else spawn_failed. The cause stays wrapped.
func SpawnFailure(err error) *coded.Error {
	var te *tmux.Error
	if errors.As(err, &te) || errors.Is(err, tmux.ErrUnsafeArgument) {
		return coded.Wrap(tmux.Code(err), err)
	}
	return coded.Wrap("spawn_failed", err)
}

// tmuxError codes a tmux error with its contract code (tmux.Code).
func tmuxError(err error) error {
	if err == nil {
		return nil
	}
	return coded.Fail(tmux.Code(err), "%v", err)
}

// movedAside is the warning for a corrupt session state that err says was
// moved aside, or none.
func movedAside(err error) []string {
	var moved *sessionstate.MovedAside
	if !errors.As(err, &moved) {
		return nil
	}
	return []string{"session state " + moved.Error()}
}
