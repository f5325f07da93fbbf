package status

import (
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
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

// A child on an ssh host lives in the host's tmux: status takes it from the
// run's state, with its host; a local one and an ended attempt are not.
func TestRemoteSessionsAreTheRunningAttemptsOnHosts(t *testing.T) {
	st := &orchestrator.State{Status: orchestrator.RunRunning}
	for _, u := range []struct{ key, host, final string }{{"1-1", "box", ""}, {"1-2", "local", ""}, {"1-3", "box", "completed"}} {
		st.Units = append(st.Units, &orchestrator.Unit{Key: u.key, Host: u.host, Steps: []*orchestrator.StepState{{Name: "dev",
			Status: orchestrator.StatusRunning, Attempts: []orchestrator.Attempt{{N: 1, Agent: "sim", Session: "sa-" + u.key, FinalState: u.final}}}}})
	}
	got := RemoteSessions(st)
	want := Session{Session: "sa-1-1", Story: "1-1", Step: "dev", Agent: "sim", Lifecycle: "running", Host: "box"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("%+v", got)
	}
	var b strings.Builder
	WriteText(&b, View{Sessions: got}, time.Now())
	if !strings.Contains(b.String(), "Live sessions: 1\n  sa-1-1  1-1 dev  sim  running  on box\n") {
		t.Fatalf("status:\n%s", b.String())
	}
	st.Status = orchestrator.RunPaused
	if got := RemoteSessions(st); len(got) != 0 {
		t.Fatalf("a paused run has working children: %+v", got)
	}
}
