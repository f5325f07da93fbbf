package main

import (
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux/child"
)

// sessionRunnerCommand is what tmux runs in a child session's pane; it is
// not for people. Its argv holds only the state directory and the session
// name: the agent's command, environment and prompt come from a spec file.
func sessionRunnerCommand() *cli.Command {
	return &cli.Command{
		Name:      child.RunnerCommand,
		Usage:     "run a child session's agent inside its tmux pane (internal)",
		Hidden:    true,
		ArgsUsage: "NAME",
		Flags:     []cli.Flag{&cli.StringFlag{Name: "state-dir", Required: true, Usage: "directory of the session's state and output files"}},
		Action: func(c *cli.Context) error {
			name := c.Args().First()
			if c.NArg() != 1 || !sessionstate.ValidName(name) {
				return coded.Usage("session-runner needs one valid session NAME")
			}
			if code := child.RunPane(c.String("state-dir"), name); code != 0 {
				return cliio.ExitStatus(code)
			}
			return nil
		},
	}
}
