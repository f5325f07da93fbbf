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
		Usage:     "write the embedded sample BMAD project (one epic, four stories) into DIR, to try a run on: shaped as BMAD 6.12 on the build-auto pipeline (without BMAD's own files; the simulated agent acts out its worker)",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "five-step", Usage: "the project as BMAD laid it out before 6.12, on the five-step pipeline"},
		},
		Action: sampleAction,
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
	write := sample.WriteBuildAutoSample
	if c.Bool("five-step") {
		write = sample.WriteSample
	}
	if err := write(dir); err != nil {
		return coded.Fail("sample_failed", "%v", err)
	}
	return cliio.OKJSON(envOf(c).Out, map[string]any{"dir": dir, "stories": sample.Stories})
}
