package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
)

const (
	// sendVerifyWait bounds how long send waits to see its text in the pane.
	sendVerifyWait = 3 * time.Second
	// sendCaptureLines is how much of the pane (scrollback included) the
	// before/after comparison reads, so a scroll does not hide the new text.
	sendCaptureLines = 400
)

func sessionSendCommand() *cli.Command {
	return &cli.Command{
		Name:      "send",
		Usage:     "type text into a session (paste buffer, then Enter) and check it arrived",
		ArgsUsage: "NAME",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "text", Usage: "the text to send"},
			&cli.BoolFlag{Name: "no-enter", Usage: "paste without pressing Enter"},
		},
		Action: sessionSend,
	}
}

func sessionSend(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	text := c.String("text")
	if text == "" {
		return cliio.UsageError("session send needs a non-empty --text")
	}
	e := envOf(c)
	tc := sessionTmux(e)
	ctx := context.Background()
	if ok, err := tc.HasSession(ctx, name); err != nil {
		return tmuxFailure(err)
	} else if !ok {
		return cliio.Fail("session_not_found", "no session %s", name)
	}
	before, err := tc.CapturePane(ctx, name, sendCaptureLines)
	if err != nil {
		return tmuxFailure(err)
	}
	if err := tc.Paste(ctx, name, sendBufferName(), text); err != nil {
		return tmuxFailure(err)
	}
	paste := child.PasteOf(sessionAgent(sessionStateDir(e), name))
	if !waitForPaste(ctx, tc, name, before, text, paste.Placeholders, sendVerifyWait) {
		return cliio.Fail("send_unverified", "the text did not arrive in session %s within %s; Enter was not pressed", name, sendVerifyWait)
	}
	// Whatever the session finished before this text is not an answer to it.
	if err := recordSendBaseline(sessionStateDir(e), name, e.Now()); err != nil {
		e.Log.Warn().Err(err).Str("session", name).Msg("cannot record the send baseline")
	}
	enter := !c.Bool("no-enter")
	if enter {
		// An Enter the CLI still counts as part of the paste would only add a line.
		time.Sleep(paste.Settle)
		if err := tc.SendKey(ctx, name, "Enter"); err != nil {
			return tmuxFailure(err)
		}
	}
	return cliio.OKJSON(e.Out, map[string]any{"session": name, "delivered": true, "enter": enter, "bytes": len(text)})
}

// sessionAgent is the agent a session was spawned with, "" when it has no
// state file (a session this tool did not spawn) or the file cannot be read.
func sessionAgent(dir, name string) string {
	st, err := marker.ReadSession(dir, name)
	if err != nil {
		return ""
	}
	return st.Agent
}

// recordSendBaseline stores the session's completion turns and output size
// in its state file, so the next monitor-session counts only what follows.
// A session without a state file (not spawned by us) has nothing to record.
func recordSendBaseline(dir, name string, now time.Time) error {
	if _, err := marker.ReadSession(dir, name); errors.Is(err, marker.ErrNotFound) {
		return nil
	}
	_, err := marker.UpdateSession(dir, name, func(st *marker.SessionState) error {
		b := &marker.SendBaseline{At: marker.Timestamp(now)}
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

// sendBufferName is a private paste buffer per call, so concurrent sends never mix.
func sendBufferName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "sa-send-" + hex.EncodeToString(b[:])
}

// waitForPaste polls the pane until it shows the paste (see pasteArrived).
func waitForPaste(ctx context.Context, tc *tmux.Client, name, before, text string, placeholders []string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		after, err := tc.CapturePane(ctx, name, sendCaptureLines)
		if err == nil && pasteArrived(before, after, text, placeholders) {
			return true
		}
		if errors.Is(err, tmux.ErrNoSession) || errors.Is(err, tmux.ErrNoServer) || time.Now().After(deadline) {
			return false
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
