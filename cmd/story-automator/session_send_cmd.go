package main

import (
	"context"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/tmux/child"
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
	before, err := tc.CapturePane(ctx, name, child.SendCaptureLines)
	if err != nil {
		return tmuxFailure(err)
	}
	if err := tc.Paste(ctx, name, child.SendBufferName(), text); err != nil {
		return tmuxFailure(err)
	}
	paste := child.PasteOf(child.SessionAgent(sessionStateDir(e), name))
	if !child.WaitForPaste(ctx, tc, name, before, text, paste.Placeholders, child.SendVerifyWait) {
		return cliio.Fail("send_unverified", "the text did not arrive in session %s within %s; Enter was not pressed", name, child.SendVerifyWait)
	}
	// Whatever the session finished before this text is not an answer to it.
	if err := child.RecordSendBaseline(sessionStateDir(e), name, e.Now()); err != nil {
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
