package status

import (
	"testing"

	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
)

func TestLiveSessionsKeepsThisProjectsOnly(t *testing.T) {
	got := LiveSessions([]child.Listed{
		{Pane: tmux.Pane{Session: "other"}},
		{Pane: tmux.Pane{Session: "mine", Attached: 1}, Mine: true,
			State: &sessionstate.State{Story: "1.2", Step: "dev", Agent: "sim", Lifecycle: sessionstate.LifecycleStarted}},
	})
	want := Session{Session: "mine", Story: "1.2", Step: "dev", Agent: "sim", Lifecycle: "running", Attached: true}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("%+v", got)
	}
	if LiveSessions(nil) == nil {
		t.Fatal("no sessions must be an empty list, not null")
	}
}
