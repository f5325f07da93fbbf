package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

func init() { register(runsCommand) }

func runsCommand() *cli.Command {
	jsonFlag := &cli.BoolFlag{Name: "json", Usage: "print JSON (the default when stdout is not a terminal)"}
	return &cli.Command{
		Name:  "runs",
		Usage: "the project's runs, newest first: outcome, stories, attempts, retries, escalations, tokens, cost, duration",
		Flags: []cli.Flag{jsonFlag},
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "one run: its summary and each story's spend",
			ArgsUsage: "ID",
			Flags:     []cli.Flag{jsonFlag},
			Action:    runsShowAction,
		}},
		Action: runsAction,
	}
}

func runsAction(c *cli.Context) error {
	if err := noArgs(c); err != nil {
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
	writeRunsTable(e.Out, runs)
	return nil
}

// writeRunsTable prints the history as a table for people.
func writeRunsTable(w io.Writer, runs []orchestrator.RunSummary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tOUTCOME\tSTORIES\tATTEMPTS\tRETRIES\tESCALATIONS\tTOKENS\tCOST\tDURATION")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.RunID, shortTime(r.StartedAt), r.Outcome,
			r.StoriesDone, r.StoriesTotal, r.Attempts, r.Retries, r.Escalations, spend.FormatTokens(r.Usage.Tokens()),
			costCell(r.Usage), durationText(r.DurationMs))
	}
	tw.Flush()
}

func costCell(t spend.Total) string {
	s := spend.FormatCost(t.CostUSD)
	if t.Unpriced > 0 || t.Unread > 0 {
		s += "+?" // some attempts have tokens without a price, or no figures at all
	}
	return s
}

func shortTime(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "—"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func durationText(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

func runsShowAction(c *cli.Context) error {
	e := envOf(c)
	if c.NArg() != 1 {
		return cliio.UsageError("runs show takes one run ID (see `story-automator runs`)")
	}
	st, path, err := orchestrator.FindRun(e.ProjectRoot, c.Args().First())
	if err != nil {
		return cliio.Fail(orchestrator.Code(err), "%v", err).WithAction("list the runs with `story-automator runs`")
	}
	sum := orchestrator.Summarize(st, path)
	stories := []map[string]any{}
	for _, u := range st.Units {
		stories = append(stories, map[string]any{"story": u.Dotted, "kind": u.Kind, "title": u.Title, "status": u.Status,
			"commit": u.Commit, "usage": u.Usage})
	}
	if c.Bool("json") || !cliio.IsTerminal(e.Out) {
		return cliio.OKJSON(e.Out, map[string]any{"run": sum, "budget": st.Config.Budget, "escalation": st.Escalation, "stories": stories})
	}
	w := e.Out
	writeRunsTable(w, []orchestrator.RunSummary{sum})
	fmt.Fprintf(w, "\n%s\n", orchestrator.SpendText(&sum.Usage, st.Config.Budget))
	if st.Escalation != nil && st.Status == orchestrator.RunPaused {
		fmt.Fprintf(w, "paused: %s\nwhat to do: %s\n", st.Escalation.Reason, st.Escalation.Action)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nSTORY\tSTATUS\tATTEMPTS\tTOKENS\tCOST\tCOMMIT")
	for _, u := range st.Units {
		var t spend.Total
		if u.Usage != nil {
			t = *u.Usage
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", u.Dotted, u.Status, t.Attempts, spend.FormatTokens(t.Tokens()), costCell(t), shortSHA(u.Commit))
	}
	tw.Flush()
	fmt.Fprintf(w, "state document: %s\n", path)
	return nil
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	if s == "" {
		return "—"
	}
	return s
}
