package orchestrator

import (
	"context"
	"errors"
	"testing"

	"github.com/story-automator/story-automator/monitor"
)

// A child parked at a dialog is not retried: the step escalates on that
// first attempt with the dialog's own code and the user's action.
func TestADialogEscalatesOnTheFirstAttemptWithItsAction(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev {
			return StepResult{FinalState: FinalStuck, Reason: monitor.ReasonDialog,
				Blocker: &Blocker{Code: "agent_dialog", Action: "trust the folder", Err: errors.New("the claude agent waits at its trust_folder dialog")}}
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
	if st.Escalation == nil || st.Escalation.Code != "agent_dialog" || st.Escalation.Action != "trust the folder" {
		t.Fatalf("escalation %+v", st.Escalation)
	}
	if h.clock.slept() != nil {
		t.Fatalf("a dialog waited for a backoff: %v", h.clock.slept())
	}
}

func TestABlockedCommitEscalatesAtOnceWithItsCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.repo.commitErr = &Blocker{Code: "git_identity_missing", Action: "give git an identity", Err: errors.New("git commit: empty ident name")}
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) {
		t.Fatalf("run: %v", err)
	}
	esc := res.State.Escalation
	if esc == nil || esc.Code != "git_identity_missing" || esc.Action != "give git an identity" {
		t.Fatalf("escalation %+v", esc)
	}
	if h.repo.commitCalls != 1 || len(h.clock.slept()) != 0 {
		t.Fatalf("%d commits tried, slept %v: a blocker is not retried", h.repo.commitCalls, h.clock.slept())
	}
}
