package monitor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/sessionstate"
)

// defaultSelectionWait bounds the wait for a dialog to show the selection
// made before it is confirmed; a dialog that does not is left to the user.
const defaultSelectionWait = 3 * time.Second

var errAnswered = errors.New("dialog already answered")

// mayAnswer reports whether the tool may answer d for this session: the
// user asked for it (the kind is in the session's AcceptDialogs), the kind is
// one a flag may answer, the profile knows how, and it was not answered yet.
func (o *observer) mayAnswer(d agent.Dialog) bool {
	st := o.last
	return st != nil && d.Accept != nil && agent.AcceptableKind(d.Kind) &&
		slices.Contains(st.AcceptDialogs, d.Kind) && !slices.Contains(st.AnsweredDialogs, d.Kind)
}

// answerDialog answers d on screen as the user would: it records the answer
// first (a dialog is answered at most once, whichever monitor sees it),
// moves the selection, confirms only once the screen shows the expected
// selection, and reports whether the answer was given.
func (o *observer) answerDialog(ctx context.Context, t Tmux, d agent.Dialog, wait time.Duration) bool {
	a := d.Accept
	if a == nil || !o.mayAnswer(d) {
		return false
	}
	st, err := sessionstate.Update(o.dir, o.name, func(st *sessionstate.State) error {
		if slices.Contains(st.AnsweredDialogs, d.Kind) {
			return errAnswered
		}
		st.AnsweredDialogs = append(st.AnsweredDialogs, d.Kind)
		return nil
	})
	if err != nil {
		return false
	}
	o.last = st
	for _, k := range a.Select {
		if t.SendKey(ctx, o.name, k) != nil {
			return false
		}
	}
	if !o.screenShows(ctx, t, a.Selected, wait) {
		return false
	}
	return t.SendKey(ctx, o.name, a.Confirm) == nil
}

// screenShows captures the pane until it shows text, for at most wait.
// Nothing signals a pane's redraw, so this one short wait polls tmux.
func (o *observer) screenShows(ctx context.Context, t Tmux, text string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		screen, err := t.CapturePane(ctx, o.name, 0)
		if err == nil && strings.Contains(screen, text) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}
