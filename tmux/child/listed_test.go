package child

import (
	"testing"

	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
)

func TestListedRowShowsRecordedStateOnlyForThisProject(t *testing.T) {
	st := &sessionstate.State{Lifecycle: "running", Agent: "sim", Story: "1.2", Step: "dev"}
	other := Listed{Pane: tmux.Pane{Session: "x", Attached: 1}, State: st}.Row()
	if _, ok := other["lifecycle"]; ok || other["attached"] != true || other["thisProject"] != false {
		t.Fatalf("other project's row: %v", other)
	}
	mine := Listed{Pane: tmux.Pane{Session: "y"}, State: st, Mine: true}.Row()
	if mine["lifecycle"] != "running" || mine["story"] != "1.2" || mine["thisProject"] != true {
		t.Fatalf("this project's row: %v", mine)
	}
}
