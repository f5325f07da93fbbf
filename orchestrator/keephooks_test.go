package orchestrator

import (
	"context"
	"testing"
)

// hookKeepingRepo records what the run asked of its hooks before it
// prepared the repository for its steps.
type hookKeepingRepo struct {
	*fakeRepo
	asked []bool
}

func (r *hookKeepingRepo) KeepHooks(on bool) { r.asked = append(r.asked, on) }

// A confined run's git runs the hooks copied at its start; a run with the
// sandbox off runs the repository's own.
func TestRunKeepsTheHooksCopiedAtItsStartWhenConfined(t *testing.T) {
	for _, sandbox := range []string{SandboxOn, SandboxOff} {
		h := newHarness(t, "1-1")
		repo := &hookKeepingRepo{fakeRepo: h.repo}
		d := h.deps()
		d.Repo = repo
		o := h.options()
		o.Sandbox = sandbox
		if _, err := Run(context.Background(), o, d); err != nil {
			t.Fatal(err)
		}
		if len(repo.asked) == 0 || repo.asked[0] != (sandbox == SandboxOn) {
			t.Fatalf("sandbox %s: KeepHooks %v", sandbox, repo.asked)
		}
	}
}
