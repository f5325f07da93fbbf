package tmuxsteps

import (
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// A request with its own prompt (a retrospective's skill) sends that, not
// the step's workflow prompt; without one the workflow prompt is sent.
func TestPromptIsTheRequestsOwnWhenItHasOne(t *testing.T) {
	dir := t.TempDir()
	if err := sample.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	proj, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := workflows.LoadPolicy(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Layout: proj, Policy: pol}
	key := workflows.StoryKey{Epic: "1"}
	req := orchestrator.StepRequest{Story: "1", Epic: "1", Step: orchestrator.StepRetro}
	plain, err := r.prompt(proj, req, key)
	if err != nil || plain == "" || strings.Contains(plain, "/bmad-retrospective -H 1") {
		t.Fatalf("workflow prompt %q, %v", plain, err)
	}
	req.Prompt = "/bmad-retrospective -H 1"
	if got, err := r.prompt(proj, req, key); err != nil || got != req.Prompt {
		t.Fatalf("got %q, %v", got, err)
	}
}
