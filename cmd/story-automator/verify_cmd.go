package main

import (
	"fmt"
	"io"

	"github.com/story-automator/story-automator/internal/cliio"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/workflows"
)

func init() { register(verifyCommand) }

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
		return cliio.UsageError("verify needs STEP and STORY, got %d argument(s)", c.NArg())
	}
	e := envOf(c)
	step, story := c.Args().Get(0), c.Args().Get(1)
	key, err := workflows.ParseTarget(step, story)
	if err != nil {
		return cliio.UsageError("%v", err)
	}
	proj, err := workflows.Open(e.ProjectRoot)
	if err != nil {
		return cliio.Fail(workflows.Code(err), "%v", err)
	}
	check, err := proj.Verifier(step, key, nil)
	if err != nil {
		return cliio.Fail(workflows.Code(err), "%v", err)
	}
	r := check.Verify(c.Context)
	if r.ContractErr != nil {
		return cliio.Fail(workflows.Code(r.ContractErr), "%s: %v", check.Name(), r.ContractErr)
	}
	e.Log.Debug().Str("step", step).Str("story", key.String()).Bool("verified", r.Verified).Msg(r.Detail)
	fields := map[string]any{"step": step, "story": key.String(), "verifier": check.Name(), "verified": r.Verified, "detail": r.Detail}
	if !c.Bool("json") && cliio.IsTerminal(e.Out) {
		return verifyPrintText(e.Out, step, key, check.Name(), r)
	}
	if r.Verified {
		return cliio.OKJSON(e.Out, fields)
	}
	f := cliio.Fail("not_verified", "%s %s: %s", step, key.Dotted(), r.Detail)
	f.Fields = fields
	return f
}

func verifyPrintText(w io.Writer, step string, key workflows.StoryKey, name string, r workflows.Result) error {
	word := "verified"
	if !r.Verified {
		word = "NOT verified"
	}
	fmt.Fprintf(w, "%s: %s %s (%s): %s\n", word, step, key.Dotted(), name, r.Detail)
	if !r.Verified {
		return cliio.ExitStatus(1)
	}
	return nil
}
