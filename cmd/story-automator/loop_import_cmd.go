package main

import (
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/coded"
)

// loopImportCommand is `loop import FILE`: it takes over a Ralph or Forge
// loop's state file so a user migrates without losing the loop.
func loopImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "take over a Ralph (.claude/ralph-loop.local.md) or Forge (.claude/forge-loop.*.local.md) loop",
		ArgsUsage: "FILE",
		Flags: append(loopShapeFlags(),
			&cli.BoolFlag{Name: "keep-source", Usage: "leave FILE in place (by default it is renamed to FILE.imported so the old hook stops acting on it)"}),
		Action: loopImport,
	}
}

func loopImport(c *cli.Context) error {
	if c.NArg() != 1 {
		return coded.Usage("loop import needs exactly one FILE")
	}
	return printLoop(c)(loopController(c).Import(c.Context, c.Args().First(), loopShape(c), c.Bool("keep-source")))
}
