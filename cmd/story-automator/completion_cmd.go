package main

import (
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/completion"
	"github.com/urfave/cli/v2"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash:  source <(story-automator completion bash)\n" +
			"zsh:   source <(story-automator completion zsh)\n" +
			"fish:  story-automator completion fish > ~/.config/fish/completions/story-automator.fish",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return coded.Usage("completion needs one shell: bash, zsh or fish")
			}
			if err := completion.Write(cliio.RawOut(c.App.Writer), c.Args().First(), c.App); err != nil {
				return coded.Usage("completion: unknown shell %q (bash, zsh or fish)", c.Args().First())
			}
			return nil
		},
	}
}
