package runview

import (
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
)

func TestEndedReportsADoneRunAndAStoppedOneWithItsCause(t *testing.T) {
	st := &orchestrator.State{RunID: "r1", Units: []*orchestrator.Unit{{Dotted: "1.1", Kind: "story", Status: "done", Commit: "abc"}}}
	res := &orchestrator.Result{Outcome: "done", State: st, StatePath: "/p/state.json", Warnings: []string{"moved aside x"}}
	end := Ended(res, "")
	if end.Code != "" || end.Fields["runId"] != "r1" || end.Fields["storiesDone"] != 1 || end.Fields["warnings"] == nil ||
		!strings.HasPrefix(end.Text, "run r1 done: 1 of 1 stories") || end.Fields["reason"] != nil {
		t.Fatalf("done: %+v", end)
	}

	st.PauseReason = "interrupted"
	if end = Ended(res, "run_interrupted"); end.Code != "run_interrupted" || end.Fields["reason"] != "interrupted" ||
		!strings.Contains(end.Fields["action"].(string), "run --resume") || !strings.Contains(end.Text, "paused (run_interrupted)") {
		t.Fatalf("paused: %+v", end)
	}

	st.Escalation = &orchestrator.Escalation{Reason: "the agent CLI is missing", Action: "install it", Code: "agent_not_found"}
	if end = Ended(res, "run_escalated"); end.Code != "agent_not_found" || end.Fields["action"] != "install it" ||
		!strings.Contains(end.Text, "why: the agent CLI is missing\nwhat to do: install it") {
		t.Fatalf("escalated with a cause of its own: %+v", end)
	}
}

// A run done with parked stories names each, what to do, its ref and the
// stories that wait on it.
func TestEndedListsParkedStories(t *testing.T) {
	st := &orchestrator.State{RunID: "r1", Units: []*orchestrator.Unit{
		{Key: "1-1", Dotted: "1.1", Kind: "story", Status: orchestrator.StatusParked,
			Parked: &orchestrator.Parked{Step: "dev", Reason: "out of retries", Action: "read the log", Ref: "refs/story-automator/parked/r1/1-1"}},
		{Key: "1-2", Dotted: "1.2", Kind: "story", Status: orchestrator.StatusDone},
		{Key: "1-3", Dotted: "1.3", Kind: "story", Status: orchestrator.StatusPending, DependsOn: []string{"1-1"}},
		{Key: "1-4", Dotted: "1.4", Kind: "story", Status: orchestrator.StatusPending, DependsOn: []string{"1-3"}},
	}}
	res := &orchestrator.Result{Outcome: orchestrator.OutcomeDoneWithParked, State: st, StatePath: "/p/state.md"}
	end := Ended(res, "done_with_parked")
	parked, _ := end.Fields["parked"].([]ParkedStory)
	if end.Code != "done_with_parked" || len(parked) != 1 || parked[0].Ref != "refs/story-automator/parked/r1/1-1" ||
		strings.Join(parked[0].Waiting, ",") != "1.3,1.4" {
		t.Fatalf("fields %+v", end.Fields)
	}
	for _, want := range []string{"run r1 done with parked stories: 1 of 4 stories done", "parked 1.1 (dev): out of retries\n  what to do: read the log\n  waiting on it: 1.3, 1.4"} {
		if !strings.Contains(end.Text, want) {
			t.Fatalf("text lacks %q:\n%s", want, end.Text)
		}
	}
}

// A park is said as one, not as an escalation.
func TestAParkIsDescribedAsOne(t *testing.T) {
	got := describeEvent(orchestrator.Event{Kind: orchestrator.EventParked, Unit: "1.1", Step: "dev", Reason: "dev story of 1.1: intent gap", Message: "answer it"})
	if got != "PARKED dev story of 1.1: intent gap; the other stories go on — answer it" {
		t.Fatalf("%q", got)
	}
}
