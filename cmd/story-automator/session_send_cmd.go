package main

import (
	"context"
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
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
		return coded.Usage("session send needs a non-empty --text")
	}
	e := envOf(c)
	enter := !c.Bool("no-enter")
	err = child.Send(context.Background(), sessionTmux(e), sessionStateDir(e), name, text, enter, e.Now, func(err error) {
		e.Log.Warn().Err(err).Str("session", name).Msg("cannot record the send baseline")
	})
	switch {
	case errors.Is(err, child.ErrSessionNotFound):
		return coded.Fail("session_not_found", "no session %s", name)
	case errors.Is(err, child.ErrSendUnverified):
		return coded.Fail("send_unverified", "the text did not arrive in session %s within %s; Enter was not pressed", name, child.SendVerifyWait)
	case errors.Is(err, child.ErrSubmitUnverified):
		return coded.Fail("submit_unverified", "the text arrived in session %s, but it was not seen to be submitted (up to %d presses of Enter); it may still be in the input box", name, child.SendSubmitAttempts)
	case err != nil:
		return tmuxFailure(err)
	}
	return cliio.OKJSON(e.Out, map[string]any{"session": name, "delivered": true, "enter": enter, "bytes": len(text)})
}
