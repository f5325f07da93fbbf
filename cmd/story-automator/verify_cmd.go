package main

import (
	"fmt"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/workflows"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check that a workflow step's work is done for a story (exit 0 verified, 1 not)",
		ArgsUsage: "STEP STORY   (STEP: create, dev, automate, review, commit, retro; STORY: 1.2, 1-2-slug, auth.3; for retro also an epic: 1, epic-1)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON even on a terminal"},
		},
		Action: verifyAction,
	}
}

// verifyAction prints {"ok":true,...,"verified":true} and exits 0 when the
// step is verified, and {"ok":false,"error":"not_verified",...} with exit 1
// when it is not, so scripts can test the exit status alone.
func verifyAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return coded.Usage("verify needs STEP and STORY, got %d argument(s)", c.NArg())
	}
	e := envOf(c)
	v, err := workflows.VerifyTarget(c.Context, e.ProjectRoot, c.Args().Get(0), c.Args().Get(1))
	if err != nil {
		return err
	}
	e.Log.Debug().Str("step", v.Step).Str("story", v.Key.String()).Bool("verified", v.Verified).Msg(v.Detail)
	switch {
	case !c.Bool("json") && cliio.IsTerminal(e.Out):
		fmt.Fprint(e.Out, v.Text())
		if !v.Verified {
			return cliio.ExitStatus(1)
		}
		return nil
	case v.Verified:
		return cliio.OKJSON(e.Out, v.Fields())
	}
	f := coded.Fail("not_verified", "%s %s: %s", v.Step, v.Key.Dotted(), v.Detail)
	f.Fields = v.Fields()
	return f
}
