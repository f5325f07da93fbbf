package main

import (
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/workflows/sample"
)

func sampleCommand() *cli.Command {
	return &cli.Command{
		Name:      "sample",
		Usage:     "write the embedded sample BMAD project (one epic, four stories) into DIR, to try a run on",
		ArgsUsage: "DIR",
		Action:    sampleAction,
	}
}

func sampleAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return coded.Usage("sample needs exactly one DIR")
	}
	dir, err := filepath.Abs(c.Args().First())
	if err != nil {
		return coded.Usage("DIR %q: %v", c.Args().First(), err)
	}
	if err := sample.WriteSample(dir); err != nil {
		return coded.Fail("sample_failed", "%v", err)
	}
	return cliio.OKJSON(envOf(c).Out, map[string]any{"dir": dir, "stories": sample.Stories})
}
