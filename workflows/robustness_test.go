package workflows

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestUnknownVerifierNameIsAContractError(t *testing.T) {
	p := openProject(t)
	pol := DefaultPolicy()
	step, err := pol.Step(StepDev)
	if err != nil {
		t.Fatal(err)
	}
	step.Verifiers = []string{"made_up"}
	c := mustVerifier(t, p, StepDev, StoryKey{"1", 1}, pol)
	r := c.Verify(context.Background())
	if r.Verified || !errors.Is(r.ContractErr, ErrContract) {
		t.Fatalf("unknown verifier passed or was not a contract error: %+v", r)
	}
}

func TestSprintUpdateStartsOverWhenAnAgentEditsTheFile(t *testing.T) {
	p := openProject(t)
	s, err := p.ReadSprintStatus()
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	err = p.UpdateSprintStatus(func(s *SprintStatus) error {
		calls++
		if calls == 1 {
			// An agent marks another story while we are about to write.
			data, _ := os.ReadFile(s.Path)
			edited := strings.Replace(string(data), "# ", "# edited by agent: ", 1)
			if edited == string(data) {
				t.Fatal("fixture has no comment to edit")
			}
			if err := os.WriteFile(s.Path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return s.Set("epic-1", "done")
	})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Path)
	if calls != 2 || !strings.Contains(string(data), "edited by agent") {
		t.Fatalf("agent's edit lost (calls %d):\n%s", calls, data)
	}
	if !strings.Contains(string(data), "epic-1: done") {
		t.Fatalf("our update lost:\n%s", data)
	}
}
