package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/gofrs/flock"
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/status"
	"github.com/story-automator/story-automator/workflows"
)

func deferredCommand() *cli.Command {
	return &cli.Command{
		Name: "deferred",
		Usage: "collect the deferred findings of every done spec (frontmatter deferred:) into BMAD's deferred-work.md, " +
			"each once (not while a run is going: then it only lists), then list the open items: a table, or JSON with --json or when piped",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "min-severity", Usage: "list only items of this severity or above: low, medium or high " +
				"(an item without a severity is listed only without this flag)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON (the default when stdout is not a terminal)"},
		},
		Action: deferredAction,
	}
}

func deferredAction(c *cli.Context) error {
	if err := cliapp.NoArgs(c); err != nil {
		return err
	}
	min := 0
	if c.IsSet("min-severity") {
		var err error
		if min, err = workflows.ParseMinSeverity(c.String("min-severity")); err != nil {
			return coded.Usage("--min-severity: %v", err)
		}
	}
	e := envOf(c)
	l, err := workflows.Open(e.ProjectRoot)
	if err != nil {
		return coded.Fail(workflows.Code(err), "%v", err).WithAction("run it in a BMAD project, or name one with --project-root")
	}
	got := workflows.Collected{Added: []workflows.DeferredEntry{}}
	if runGoing(e.ProjectRoot) {
		// A write here would change the tree the run commits, under it.
		got.Warnings = []string{"a run is going: nothing collected now (a write would change the tree it commits); listing only: run this again when it is done"}
	} else if got, err = workflows.CollectAllDeferred(l); err != nil {
		return deferredFailure(err)
	}
	w, open, err := status.OpenDeferred(e.ProjectRoot, min)
	if err != nil {
		return deferredFailure(err)
	}
	fields := warned(e, map[string]any{"path": w.Path, "collected": got, "open": open, "total": len(w.Items)}, got.Warnings)
	if c.Bool("json") || !cliio.IsTerminal(e.Out) {
		return cliio.OKJSON(e.Out, fields)
	}
	writeDeferred(e.Out, l, w, got, open, c.String("min-severity"))
	return nil
}

// deferredFailure is a failure of collecting or reading deferred-work.md,
// with what to do about it.
func deferredFailure(err error) error {
	f := coded.Fail(workflows.Code(err), "%v", err)
	if errors.Is(err, workflows.ErrDeferredWorkInvalid) {
		return f.WithAction("fix the line named by hand (nothing was written), then run `story-automator deferred` again")
	}
	return f
}

// writeDeferred is the command's text: what was collected, then the table.
func writeDeferred(out io.Writer, l *workflows.Layout, w workflows.DeferredWork, got workflows.Collected, open []workflows.DeferredEntry, min string) {
	where := l.Rel(w.Path)
	switch n := len(got.Added); {
	case n > 0:
		fmt.Fprintf(out, "Collected %d new item(s) from %d done spec(s) into %s.\n", n, got.Specs, where)
	case got.Path == "":
		fmt.Fprintf(out, "Listing only, a run is going: the items in %s.\n", where)
	default:
		fmt.Fprintf(out, "Nothing new to collect from %d done spec(s); the items are in %s.\n", got.Specs, where)
	}
	at := ""
	if min != "" {
		at = " of severity " + min + " or above"
	}
	if len(open) == 0 {
		fmt.Fprintf(out, "No open deferred items%s (%d in the file).\n", at, len(w.Items))
		return
	}
	fmt.Fprintf(out, "%d open item(s)%s (%d in the file):\n\n", len(open), at, len(w.Items))
	status.WriteDeferredTable(out, open)
}

// runGoing reports whether a run holds the project's run lock. It probes
// with a shared lock, so two `deferred` at once never take each other's
// probe for a run.
func runGoing(root string) bool {
	fl := flock.New(orchestrator.RunLockPath(root))
	ok, err := fl.TryRLock()
	if err != nil {
		return false
	}
	if ok {
		_ = fl.Unlock()
		return false
	}
	return true
}
