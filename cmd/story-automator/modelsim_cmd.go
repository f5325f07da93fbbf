package main

import (
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/modelsim/cmdline"
)

func modelSimCommand() *cli.Command { return cmdline.Command(modelSimAction) }

// modelSimAction serves until a signal; a step's agent runs this binary.
func modelSimAction(c *cli.Context) error {
	e := envOf(c)
	exe, _ := e.Exe() // without it, an agent finds story-automator on its PATH
	return cmdline.Serve(c, e.Out, exe, e.Log)
}
