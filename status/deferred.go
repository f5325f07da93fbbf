package status

import (
	"fmt"
	"io"
	"path"
	"text/tabwriter"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/workflows"
)

// OpenDeferred is the project's open deferred items at or above the
// severity rank min (0: all), and deferred-work.md as read: what the
// `deferred` command lists and the dashboard's view shows.
func OpenDeferred(root string, min int) (workflows.DeferredWork, []workflows.DeferredEntry, error) {
	l, err := workflows.Open(root)
	if err != nil {
		return workflows.DeferredWork{}, nil, err
	}
	w, err := workflows.ReadDeferredWork(l)
	if err != nil {
		return w, nil, err
	}
	return w, w.Open(min), nil
}

// WriteDeferredTable prints deferred items as a table, one line each: id,
// severity, summary and location (cut to fit a screen: the whole text is in
// the file and the JSON) and the spec it came from.
func WriteDeferredTable(w io.Writer, items []workflows.DeferredEntry) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSEVERITY\tSUMMARY\tLOCATION\tSPEC")
	for _, e := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.ID, textline.OrDash(e.Severity), textline.Cut(textline.OneLine(e.Summary), summaryCells),
			textline.OrDash(textline.Cut(textline.OneLine(e.Location), locationCells)), textline.OrDash(path.Base(e.SourceSpec)))
	}
	tw.Flush()
}

// How wide a table's summary and location may be.
const (
	summaryCells  = 60
	locationCells = 32
)
