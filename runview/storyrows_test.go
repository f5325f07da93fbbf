package runview

import (
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
