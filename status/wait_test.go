package status

import (
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
)

func TestWaitExitAndFields(t *testing.T) {
	for outcome, want := range map[string]int{orchestrator.WaitDone: 0, orchestrator.WaitEscalated: 3, orchestrator.WaitPaused: 3,
		orchestrator.WaitDead: 4, orchestrator.WaitNoRun: 6, orchestrator.WaitRunning: 8} {
		if got := WaitExit(outcome); got != want {
			t.Errorf("%s: exit %d, want %d", outcome, got, want)
		}
	}
	f := WaitFields(orchestrator.WaitResult{Outcome: orchestrator.WaitNoRun, Next: "run"})
	if len(f) != 9 || f["runId"] != "" || f["next"] != "run" || f["storiesDone"] != 0 {
		t.Fatalf("%v", f)
	}
}
