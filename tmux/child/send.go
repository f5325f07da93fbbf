package child

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
)

const (
	// SendVerifyWait bounds how long send waits to see its text in the pane.
	SendVerifyWait = 3 * time.Second
	// SendCaptureLines is how much of the pane (scrollback included) the
	// before/after comparison reads, so a scroll does not hide the new text.
	SendCaptureLines = 400
)

// SessionAgent is the agent a session was spawned with, "" when it has no
// state file (a session this tool did not spawn) or the file cannot be read.
func SessionAgent(dir, name string) string {
	st, err := sessionstate.Read(dir, name)
	if err != nil {
		return ""
	}
	return st.Agent
}

// RecordSendBaseline stores the session's completion turns and output size
// in its state file, so the next monitor-session counts only what follows.
// A session without a state file (not spawned by us) has nothing to record.
func RecordSendBaseline(dir, name string, now time.Time) error {
	if _, err := sessionstate.Read(dir, name); errors.Is(err, marker.ErrNotFound) {
		return nil
	}
	_, err := sessionstate.Update(dir, name, func(st *sessionstate.State) error {
		b := &sessionstate.SendBaseline{At: marker.Timestamp(now)}
		if st.Completion != nil {
			b.Turns = st.Completion.Turns
		}
		if st.OutputFile != "" {
			if fi, err := os.Stat(st.OutputFile); err == nil {
				b.OutputOffset = fi.Size()
			}
		}
		st.SendBaseline = b
		return nil
	})
	return err
}

// SendBufferName is a private paste buffer per call, so concurrent sends never mix.
func SendBufferName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "sa-send-" + hex.EncodeToString(b[:])
}

// WaitForPaste polls the pane until it shows the paste (see pasteArrived)
// and returns that screen.
func WaitForPaste(ctx context.Context, tc *tmux.Client, name, before, text string, placeholders []string, wait time.Duration) (string, bool) {
	return waitForScreen(ctx, tc, name, wait, func(after string) bool {
		return pasteArrived(before, after, text, placeholders)
	})
}

// waitForScreen polls the pane (scrollback included) until ok holds for it
// and returns that screen; false once wait is over or the session is gone.
func waitForScreen(ctx context.Context, tc *tmux.Client, name string, wait time.Duration, ok func(string) bool) (string, bool) {
	deadline := time.Now().Add(wait)
	for {
		screen, err := tc.CapturePane(ctx, name, SendCaptureLines)
		if err == nil && ok(screen) {
			return screen, true
		}
		if errors.Is(err, tmux.ErrNoSession) || errors.Is(err, tmux.ErrNoServer) || time.Now().After(deadline) {
			return screen, false
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// pasteArrived reports whether the pane changed from before to after in a
// way the paste explains: the end of text shows more often than before, or
// one of the agent's collapsed-paste placeholders does. Text that was
// already on the screen therefore does not count as delivered by itself.
// Blank text, which shows nothing of itself, only needs some change.
func pasteArrived(before, after, text string, placeholders []string) bool {
	want := sendSnippet(text)
	switch {
	case want == "":
		return after != before
	case strings.Count(squash(after), want) > strings.Count(squash(before), want):
		return true
	}
	for _, ph := range placeholders {
		if strings.Count(after, ph) > strings.Count(before, ph) {
			return true
		}
	}
	return false
}

// sendSnippet is the last few visible characters of text, without
// whitespace or box drawing, which survive wrapping in the pane.
func sendSnippet(text string) string {
	r := []rune(squash(text))
	if len(r) > 16 {
		r = r[len(r)-16:]
	}
	return string(r)
}

func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || (r >= 0x2500 && r <= 0x257F) {
			return -1
		}
		return r
	}, s)
}

// Errors of Send besides tmux's own.
var (
	// ErrSessionNotFound: there is no session of that name to send to.
	ErrSessionNotFound = errors.New("no such session")
	// ErrSendUnverified: the text did not show in the pane within
	// SendVerifyWait, so Enter was not pressed.
	ErrSendUnverified = errors.New("the text did not arrive")
	// ErrSubmitUnverified: the text arrived, but after SendSubmitAttempts
	// presses of Enter the pane did not show the input box emptied.
	ErrSubmitUnverified = errors.New("the Enter did not submit the text")
)

// Send types text into session name through a private paste buffer, checks
// that it arrived, records the send baseline in the session's state (dir)
// and, when enter is set, presses Enter once the agent's paste has settled
// and, where the screen can tell, makes sure it submitted (see submit).
// A baseline it cannot record goes to warn and does not fail the send.
func Send(ctx context.Context, tc *tmux.Client, dir, name, text string, enter bool, now func() time.Time, warn func(error)) error {
	if ok, err := tc.HasSession(ctx, name); err != nil {
		return err
	} else if !ok {
		return ErrSessionNotFound
	}
	before, err := tc.CapturePane(ctx, name, SendCaptureLines)
	if err != nil {
		return err
	}
	if err := tc.Paste(ctx, name, SendBufferName(), text); err != nil {
		return err
	}
	paste := agent.PasteOf(SessionAgent(dir, name))
	pasted, ok := WaitForPaste(ctx, tc, name, before, text, paste.Placeholders, SendVerifyWait)
	if !ok {
		return ErrSendUnverified
	}
	// Whatever the session finished before this text is not an answer to it.
	if err := RecordSendBaseline(dir, name, now()); err != nil {
		warn(err)
	}
	if !enter {
		return nil
	}
	return submit(ctx, tc, name, newSubmitCheck(before, pasted, text, paste), paste.Settle)
}
