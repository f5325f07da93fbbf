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
