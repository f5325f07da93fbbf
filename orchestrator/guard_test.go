package orchestrator

import (
	"context"
	"errors"
	"testing"
)

func (r *fakeRepo) GitFingerprint() (string, error) {
	s, _ := r.gitSum.Load().(string)
	return s, nil
}

// An attempt during which the repository's config or hooks changed ends
// its step escalated with git_tampered, before the run's own git (which
// would run a planted hook unconfined) commits anything.
func TestAnAttemptThatChangesTheRepositorysHooksEscalates(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.repo.gitSum.Store("clean")
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev {
			h.repo.gitSum.Store("a hook planted")
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) {
		t.Fatalf("run: %v", err)
	}
	st := h.saved(res)
	if st.Escalation == nil || st.Escalation.Code != CodeGitTampered || st.Escalation.Action == "" {
		t.Fatalf("escalation %+v", st.Escalation)
	}
	if n := len(h.repo.commits); n != 0 {
		t.Fatalf("the run committed %d times after the hooks changed", n)
	}
	// Untouched, the same run ends done.
	h2 := newHarness(t, "1-1")
	h2.repo.gitSum.Store("clean")
	h2.runOK()
}

// The check comes before the run's own git looks at the project after the
// attempt: a `git status` would run a fsmonitor or filter the child
// planted in the config. The untouched attempt is looked at (the control).
func TestAnAttemptThatChangesTheRepositorysConfigIsNotLookedAtAfterwards(t *testing.T) {
	t.Parallel()
	for _, plant := range []bool{true, false} {
		h := newHarness(t, "1-1")
		h.repo.gitSum.Store("clean")
		var atDevEnd int
		h.steps.script = func(_ context.Context, req StepRequest) StepResult {
			if req.Step == StepDev {
				if plant {
					h.repo.gitSum.Store("core.fsmonitor planted")
				}
				h.repo.mu.Lock()
				atDevEnd = h.repo.snapshots
				h.repo.mu.Unlock()
			}
			return StepResult{FinalState: FinalCompleted}
		}
		_, _ = h.run(context.Background(), h.options())
		h.repo.mu.Lock()
		after := h.repo.snapshots
		h.repo.mu.Unlock()
		if plant && after != atDevEnd {
			t.Fatalf("the project was listed %d time(s) after the attempt that changed the config", after-atDevEnd)
		}
		if !plant && after == atDevEnd {
			t.Fatal("control: an untouched attempt's changes were never listed")
		}
	}
}
