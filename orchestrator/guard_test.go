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
