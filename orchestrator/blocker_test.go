package orchestrator

import (
	"context"
	"errors"
	"testing"

	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/tmux/child"
)

// A child parked at a dialog is not retried: the step escalates on that
// first attempt with the dialog's own code and the user's action.
func TestADialogEscalatesOnTheFirstAttemptWithItsAction(t *testing.T) {
	h := newHarness(t, "1-1")
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev {
			return StepResult{FinalState: FinalStuck, Reason: monitor.ReasonDialog,
				Blocker: blockerOf("claude", monitor.Result{Reason: monitor.ReasonDialog, Dialog: child.DialogTrustFolder, Action: "trust the folder"})}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) {
		t.Fatalf("err %v", err)
	}
	st := h.saved(res)
	if n := len(st.Unit("1-1").Step(StepDev).Attempts); n != 1 {
		t.Fatalf("dev attempts %d, want 1: a dialog is never retried", n)
	}
	if st.Escalation == nil || st.Escalation.Code != CodeAgentDialog || st.Escalation.Action != "trust the folder" {
		t.Fatalf("escalation %+v", st.Escalation)
	}
	if h.clock.slept() != nil {
		t.Fatalf("a dialog waited for a backoff: %v", h.clock.slept())
	}
}

func TestExit127IsAMissingAgentNotACrashToRetry(t *testing.T) {
	b := blockerOf("codex", monitor.Result{FinalState: monitor.Crashed, Reason: "exit_code_127"})
	if b == nil || b.Code != child.CodeAgentNotFound || b.Action != "install it: npm install -g @openai/codex@0.169.0" {
		t.Fatalf("blocker %+v", b)
	}
	if blockerOf("codex", monitor.Result{FinalState: monitor.Crashed, Reason: "exit_code_1"}) != nil {
		t.Fatal("an ordinary crash became a blocker")
	}
}
