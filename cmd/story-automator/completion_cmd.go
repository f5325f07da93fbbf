package main

import (
	"fmt"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/completion"
	"github.com/urfave/cli/v2"
)

func init() { register(completionCommand) }

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
				return cliio.UsageError("completion needs one shell: bash, zsh or fish")
			}
			tree := completion.Tree(c.App)
			out := cliio.RawOut(c.App.Writer)
			switch c.Args().First() {
			case "bash":
				completion.WriteBash(out, tree)
			case "zsh":
				fmt.Fprintln(out, "#compdef story-automator\nautoload -U +X bashcompinit && bashcompinit")
				completion.WriteBash(out, tree)
			case "fish":
				completion.WriteFish(out, tree)
			default:
				return cliio.UsageError("completion: unknown shell %q (bash, zsh or fish)", c.Args().First())
			}
			return nil
		},
	}
}
