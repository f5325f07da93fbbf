package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/tmux"
)

// sendVerifyWait bounds how long send waits to see its text in the pane.
const sendVerifyWait = 3 * time.Second

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
		return usageError("session send needs a non-empty --text")
	}
	e := envOf(c)
	tc := sessionTmux(e)
	ctx := context.Background()
	if ok, err := tc.HasSession(ctx, name); err != nil {
		return tmuxFailure(err)
	} else if !ok {
		return fail("session_not_found", "no session %s", name)
	}
	if err := tc.Paste(ctx, name, sendBufferName(), text); err != nil {
		return tmuxFailure(err)
	}
	if !waitForText(ctx, tc, name, text, sendVerifyWait) {
		return fail("send_unverified", "the text did not appear in session %s within %s; Enter was not pressed", name, sendVerifyWait)
	}
	enter := !c.Bool("no-enter")
	if enter {
		if err := tc.SendKey(ctx, name, "Enter"); err != nil {
			return tmuxFailure(err)
		}
	}
	return okJSON(e.Out, map[string]any{"session": name, "delivered": true, "enter": enter, "bytes": len(text)})
}

// sendBufferName is a private paste buffer per call, so concurrent sends never mix.
func sendBufferName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "sa-send-" + hex.EncodeToString(b[:])
}

// waitForText polls the pane until the end of text shows (or an agent's
// collapsed-paste placeholder does).
func waitForText(ctx context.Context, tc *tmux.Client, name, text string, wait time.Duration) bool {
	want := sendSnippet(text)
	deadline := time.Now().Add(wait)
	for {
		screen, err := tc.CapturePane(ctx, name, 0)
		if err == nil && (strings.Contains(squash(screen), want) || strings.Contains(screen, "[Pasted text")) {
			return true
		}
		if errors.Is(err, tmux.ErrNoSession) || errors.Is(err, tmux.ErrNoServer) || time.Now().After(deadline) {
			return false
		}
		time.Sleep(40 * time.Millisecond)
	}
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
