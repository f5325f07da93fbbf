package runview

import (
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
)

func TestStoryRows(t *testing.T) {
	if rows := StoryRows(&orchestrator.State{}); rows == nil || len(rows) != 0 {
		t.Fatalf("a run without stories lists none: %v", rows)
	}
	rows := StoryRows(&orchestrator.State{Units: []*orchestrator.Unit{{Dotted: "1.2", Kind: "story", Title: "T", Status: "done", Commit: "abc"}}})
	if len(rows) != 1 || rows[0]["story"] != "1.2" || rows[0]["commit"] != "abc" || rows[0]["status"] != "done" {
		t.Fatalf("%v", rows)
	}
}

// runs show names each story's host: a HOST column once a story ran on
// another machine, "host" in the JSON rows always.
func TestRunShowNamesHosts(t *testing.T) {
	st := &orchestrator.State{RunID: "run-1", Units: []*orchestrator.Unit{
		{Dotted: "1.1", Kind: "story", Status: "done", Host: "big"}, {Dotted: "1.2", Kind: "story", Status: "done"}}}
	rows := StoryRows(st)
	if rows[0]["host"] != "big" || rows[1]["host"] != "local" {
		t.Fatalf("%v", rows)
	}
	var b strings.Builder
	WriteRun(&b, st, orchestrator.RunSummary{RunID: "run-1"}, "x.md")
	if !strings.Contains(b.String(), "HOST") || !strings.Contains(b.String(), "big") {
		t.Fatalf("runs show:\n%s", b.String())
	}
	st.Units[0].Host = "local"
	b.Reset()
	WriteRun(&b, st, orchestrator.RunSummary{RunID: "run-1"}, "x.md")
	if strings.Contains(b.String(), "HOST") {
		t.Fatalf("a run on this machine alone shows hosts:\n%s", b.String())
	}
}
