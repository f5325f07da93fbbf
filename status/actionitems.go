package status

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/workflows"
)

// OpenActionItems are the board's retrospective action items not yet done
// (open or in-progress), which `run --action-items` takes up, and the
// board they are read from: what `status` lists and the dashboard's view
// shows. A project without a BMAD layout has neither; a board that cannot
// be read is the error (it names the line).
func OpenActionItems(root string) (board string, items []workflows.ActionItem, err error) {
	lay, err := workflows.Open(root)
	if err != nil {
		return "", nil, err
	}
	all, err := lay.ReadActionItems()
	if err != nil {
		return lay.SprintStatusPath(), nil, err
	}
	for _, a := range all {
		if a.Status != workflows.ActionDone {
			items = append(items, a)
		}
	}
	return lay.SprintStatusPath(), items, nil
}

// WriteActionItemsTable prints action items as a table, one line each:
// status, epic, owner, the action (cut to fit a screen: the whole text is
// on the board and in the JSON) and the id.
func WriteActionItemsTable(w io.Writer, items []workflows.ActionItem) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tEPIC\tOWNER\tACTION\tID")
	for _, a := range items {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", a.Status, a.Epic, textline.OrDash(a.Owner),
			textline.Cut(textline.OneLine(a.Action), summaryCells), a.ID)
	}
	tw.Flush()
}
