package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/runview"
)

func runsCommand() *cli.Command {
	jsonFlag := &cli.BoolFlag{Name: "json", Usage: "print JSON (the default when stdout is not a terminal)"}
	return &cli.Command{
		Name:  "runs",
		Usage: "the project's runs, newest first: outcome, stories, attempts, retries, escalations, tokens, cost, duration",
		Flags: []cli.Flag{jsonFlag},
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "one run: its summary and each story's spend; --html FILE draws it as one self-contained HTML page",
			ArgsUsage: "ID",
			Flags: []cli.Flag{jsonFlag, &cli.StringFlag{Name: "html", Usage: "write the run's timeline, spend and attempts " +
				"as one self-contained HTML file (- prints it); the state document names the file"}},
			Action: runsShowAction,
		}},
		Action: runsAction,
	}
}

func runsAction(c *cli.Context) error {
	if err := cliapp.NoArgs(c); err != nil {
		return err
	}
	e := envOf(c)
	runs := orchestrator.History(e.ProjectRoot)
	if c.Bool("json") || !cliio.IsTerminal(e.Out) {
		return cliio.OKJSON(e.Out, map[string]any{"runs": runs})
	}
	if len(runs) == 0 {
		fmt.Fprintln(e.Out, "No runs in this project yet (start one with `story-automator run`).")
		return nil
	}
	runview.WriteRunsTable(e.Out, runs)
	return nil
}

func runsShowAction(c *cli.Context) error {
	e := envOf(c)
	if c.NArg() != 1 {
		return coded.Usage("runs show takes one run ID (see `story-automator runs`)")
	}
	st, path, err := orchestrator.FindRun(e.ProjectRoot, c.Args().First())
	if err != nil {
		return coded.Fail(orchestrator.Code(err), "%v", err).WithAction("list the runs with `story-automator runs`")
	}
	if c.IsSet("html") {
		return writeRunHTML(c, st, path, c.String("html"))
	}
	sum := orchestrator.SummarizeSeen(st, path, orchestrator.RunLockHeld(e.ProjectRoot)).At(e.Now())
	if c.Bool("json") || !cliio.IsTerminal(e.Out) {
		return cliio.OKJSON(e.Out, map[string]any{"run": sum, "budget": st.Config.Budget, "escalation": st.Escalation, "stories": runview.StoryRows(st)})
	}
	runview.WriteRun(e.Out, st, sum, path)
	return nil
}
