package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// verifySample writes the sample BMAD project into a temp dir.
func verifySample(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "greeter")
	if err := sample.WriteSample(root); err != nil {
		t.Fatal(err)
	}
	return root
}

func verifyArtifacts(root string) string {
	return filepath.Join(root, "_bmad-output", "implementation-artifacts")
}

func TestVerifyCreateNotVerifiedThenVerified(t *testing.T) {
	root := verifySample(t)
	res, code := runCLI(t, root, "verify", "create", "1.2")
	if code != 1 || res["ok"] != false || res["error"] != "not_verified" || res["verified"] != false ||
		res["story"] != "1-2" || res["step"] != "create" || res["verifier"] != "create_story_artifact" ||
		!strings.Contains(res["detail"].(string), "expected 1-2-greet-by-name.md") {
		t.Fatalf("before the story file: %d %v", code, res)
	}
	if err := os.WriteFile(filepath.Join(verifyArtifacts(root), "1-2-greet-by-name.md"), []byte("# Story 1.2: Greet by Name\n\nStatus: ready-for-dev\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Flags may follow the positional arguments.
	res, code = runCLI(t, root, "verify", "create", "1-2-greet-by-name", "--json")
	if code != 0 || res["ok"] != true || res["verified"] != true || res["story"] != "1-2" ||
		!strings.Contains(res["detail"].(string), "1-2-greet-by-name.md") {
		t.Fatalf("after the story file: %d %v", code, res)
	}
}

func TestVerifyDevRunsTheSampleTestCommand(t *testing.T) {
	root := verifySample(t)
	res, code := runCLI(t, root, "verify", "dev", "1.1")
	if code != 1 || !strings.Contains(res["detail"].(string), "dev_completion: story 1.1 is not review or done") {
		t.Fatalf("backlog story: %d %v", code, res)
	}
	p, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetStoryStatus(workflows.StoryKey{Epic: "1", Num: 1}, workflows.StatusReview); err != nil {
		t.Fatal(err)
	}
	res, code = runCLI(t, root, "verify", "dev", "1.1")
	if code != 0 || res["verifier"] != "dev_completion+command:sh tests/run.sh" || !strings.Contains(res["detail"].(string), "exited 0") {
		t.Fatalf("story in review, tests passing: %d %v", code, res)
	}
	if err := os.WriteFile(filepath.Join(root, "tests", "broken_test.sh"), []byte("exit 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, code = runCLI(t, root, "verify", "dev", "1.1")
	if code != 1 || !strings.Contains(res["detail"].(string), "FAIL tests/broken_test.sh") {
		t.Fatalf("failing tests: %d %v", code, res)
	}
}

func TestVerifyRetroTakesAnEpic(t *testing.T) {
	root := verifySample(t)
	for _, arg := range []string{"epic-1", "1", "1.3"} {
		res, code := runCLI(t, root, "verify", "retro", arg)
		if code != 1 || res["verifier"] != "epic_complete" || !strings.Contains(res["detail"].(string), "epic 1: 4 of 4 stories not done") {
			t.Errorf("retro %s: %d %v", arg, code, res)
		}
	}
}

func TestVerifyFailures(t *testing.T) {
	root := verifySample(t)
	cases := []struct {
		args  []string
		code  int
		error string
	}{
		{[]string{"verify", "review", "9.9"}, 1, "story_not_found"},
		{[]string{"verify", "retro", "epic-7"}, 1, "epic_not_found"},
		{[]string{"verify", "deploy", "1.1"}, 2, "usage_error"},
		{[]string{"verify", "dev", "epic-1"}, 2, "usage_error"},
		{[]string{"verify", "dev"}, 2, "usage_error"},
		{[]string{"verify", "dev", "1.1", "extra"}, 2, "usage_error"},
		{[]string{"verify", "--bogus", "dev", "1.1"}, 2, "usage_error"},
	}
	for _, c := range cases {
		res, code := runCLI(t, root, c.args...)
		if code != c.code || res["ok"] != false || res["error"] != c.error {
			t.Errorf("%v: %d %v, want %d %s", c.args, code, res, c.code, c.error)
		}
	}
	res, code := runCLI(t, t.TempDir(), "verify", "dev", "1.1")
	if code != 1 || res["error"] != "bmad_layout_not_found" {
		t.Errorf("no BMAD layout: %d %v", code, res)
	}
	if err := os.WriteFile(filepath.Join(root, workflows.PolicyFile), []byte("steps:\n  dev:\n    timeot: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, code = runCLI(t, root, "verify", "dev", "1.1")
	if code != 1 || res["error"] != "policy_invalid" || !strings.Contains(res["message"].(string), "steps.dev.timeot") {
		t.Errorf("bad policy: %d %v", code, res)
	}
}

func TestVerifyTextOutput(t *testing.T) {
	key := workflows.StoryKey{Epic: "1", Num: 2}
	not := workflows.Verification{Step: "review", Key: key, Verifier: "review_completion", Result: workflows.Result{Detail: "story 1.2 is not done"}}
	if got := not.Text(); got != "NOT verified: review 1.2 (review_completion): story 1.2 is not done\n" {
		t.Errorf("not verified: %q", got)
	}
	ok := workflows.Verification{Step: "create", Key: key, Verifier: "create_story_artifact", Result: workflows.Result{Verified: true, Detail: "story file x.md"}}
	if got := ok.Text(); got != "verified: create 1.2 (create_story_artifact): story file x.md\n" {
		t.Errorf("verified: %q", got)
	}
}

func TestWorkflowVerifierForMonitorSession(t *testing.T) {
	root := verifySample(t)
	e := &runtimeEnv{ProjectRoot: root}
	v, err := workflowVerifier(e.ProjectRoot, "review", "1.1")
	if err != nil {
		t.Fatal(err)
	}
	if d := v.Verify(context.Background()); v.Name() != "review_completion" || d.Verified || d.ContractErr != nil || !strings.Contains(d.Detail, "not done") {
		t.Errorf("review 1.1 on a backlog story: %s %+v", v.Name(), d)
	}
	p, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetStoryStatus(workflows.StoryKey{Epic: "1", Num: 1}, workflows.StatusDone); err != nil {
		t.Fatal(err)
	}
	if d := v.Verify(context.Background()); !d.Verified || d.ContractErr != nil {
		t.Errorf("re-check after the story is done: %+v", d)
	}
	for _, c := range [][2]string{{"review", "9.9"}, {"review", "not a key"}, {"deploy", "1.1"}, {"retro", "epic-7"}} {
		v, err := workflowVerifier(e.ProjectRoot, c[0], c[1])
		if err != nil {
			t.Errorf("%v: error %v, want a verifier reporting a contract error", c, err)
			continue
		}
		if d := v.Verify(context.Background()); d.Verified || !errors.Is(d.ContractErr, workflows.ErrContract) {
			t.Errorf("%v: verdict %+v, want a contract error", c, d)
		}
	}
	if _, err := workflowVerifier(t.TempDir(), "review", "1.1"); !errors.Is(err, workflows.ErrLayoutNotFound) {
		t.Errorf("no BMAD layout: err = %v", err)
	}
}
