package workflows

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustVerifier(t *testing.T, p *Layout, step string, key StoryKey, pol *Policy) Check {
	t.Helper()
	c, err := p.Verifier(step, key, pol)
	if err != nil {
		t.Fatalf("Verifier(%s, %s): %v", step, key, err)
	}
	return c
}

func expectVerdict(t *testing.T, c Check, verified bool, detail string) {
	t.Helper()
	r := c.Verify(context.Background())
	if r.Verified != verified || r.ContractErr != nil || !strings.Contains(r.Detail, detail) {
		t.Errorf("%s: %+v, want verified=%v with detail containing %q", c.Name(), r, verified, detail)
	}
}

func TestSessionExitVerifier(t *testing.T) {
	p := openProject(t)
	c := mustVerifier(t, p, StepAutomate, StoryKey{"1", 3}, DefaultPolicy())
	if c.Name() != VerifySessionExit {
		t.Errorf("name %q", c.Name())
	}
	expectVerdict(t, c, true, "automate session completed")
}

func TestCreateStoryArtifactVerifier(t *testing.T) {
	p := openProject(t)
	c := mustVerifier(t, p, StepCreate, StoryKey{"2", 1}, DefaultPolicy())
	if c.Name() != VerifyCreateStoryArtifact {
		t.Errorf("name %q", c.Name())
	}
	expectVerdict(t, c, false, "no story file for 2.1 in _bmad-output/implementation-artifacts (expected 2-1-product-list.md)")
	writeFiles(t, p.ArtifactsDir, map[string]string{"2-1-product-list.md": "# Story 2.1\n\nStatus: ready-for-dev\n"})
	expectVerdict(t, c, true, "story file _bmad-output/implementation-artifacts/2-1-product-list.md")
	writeFiles(t, p.ArtifactsDir, map[string]string{"2-1-products.md": "# Story 2.1\n"})
	expectVerdict(t, c, false, "2 story files for 2.1, want exactly one: _bmad-output/implementation-artifacts/2-1-product-list.md, _bmad-output/implementation-artifacts/2-1-products.md")
}

func TestDevCompletionVerifier(t *testing.T) {
	p := openProject(t)
	c := mustVerifier(t, p, StepDev, StoryKey{"1", 3}, DefaultPolicy())
	expectVerdict(t, c, false, "story 1.3 is not review or done: sprint-status.yaml says ready-for-dev, the story file says ready-for-dev")
	if err := SetStoryFileStatus(filepath.Join(p.ArtifactsDir, "1-3-password-reset.md"), StatusReview); err != nil {
		t.Fatal(err)
	}
	expectVerdict(t, c, true, "the story file says 1.3 is review")
}

func TestReviewCompletionVerifier(t *testing.T) {
	p := openProject(t)
	c := mustVerifier(t, p, StepReview, StoryKey{"1", 2}, DefaultPolicy())
	expectVerdict(t, c, false, "story 1.2 is not done: sprint-status.yaml says review, the story file says review")
	// The sprint status alone is enough.
	if err := p.UpdateSprintStatus(func(s *SprintStatus) error { return s.SetStory(StoryKey{"1", 2}, "", StatusDone) }); err != nil {
		t.Fatal(err)
	}
	expectVerdict(t, c, true, "sprint-status.yaml says 1.2 is done")
	// So is the story file alone, for a story without a sprint entry.
	writeFiles(t, p.ArtifactsDir, map[string]string{"3-1-extra.md": "# Story 3.1\n\n**Status:** Done\n"})
	expectVerdict(t, mustVerifier(t, p, StepReview, StoryKey{"3", 1}, DefaultPolicy()), true, "the story file says 3.1 is done")
	writeFiles(t, p.ArtifactsDir, map[string]string{"3-2-extra.md": "# Story 3.2\n"})
	expectVerdict(t, mustVerifier(t, p, StepReview, StoryKey{"3", 2}, DefaultPolicy()), false, "sprint-status.yaml says nothing, the story file says nothing")
}

func TestEpicCompleteVerifier(t *testing.T) {
	p := openProject(t)
	c := mustVerifier(t, p, StepRetro, StoryKey{Epic: "1"}, DefaultPolicy())
	if c.Name() != VerifyEpicComplete {
		t.Errorf("name %q", c.Name())
	}
	expectVerdict(t, c, false, "epic 1: 2 of 3 stories not done: 1.2 (review), 1.3 (ready-for-dev)")
	for _, k := range []StoryKey{{"1", 2}, {"1", 3}} {
		if err := p.SetStoryStatus(k, StatusDone); err != nil {
			t.Fatal(err)
		}
	}
	expectVerdict(t, c, true, "epic 1: all 3 stories done")
	// A story key for retro means its epic.
	expectVerdict(t, mustVerifier(t, p, StepRetro, StoryKey{"2", 1}, DefaultPolicy()), false, "epic 2: 2 of 2 stories not done")
}

func TestCommandVerifier(t *testing.T) {
	p := openProject(t)
	pol := func(doc string) *Policy {
		pol, err := ParsePolicy("test", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	// The verdicts, with the command unconfined (confined_test.go runs it in its sandbox).
	ok := pol("sandbox: off\ntestCommand: test -f _bmad/bmm/config.yaml && echo fine\nsteps:\n  dev:\n    verifier: command\n")
	expectVerdict(t, mustVerifier(t, p, StepDev, StoryKey{"1", 1}, ok), true, `"test -f _bmad/bmm/config.yaml && echo fine" exited 0`)
	failing := pol("sandbox: off\ntestCommand: \"echo 'FAIL: TestLogin'; exit 3\"\nsteps:\n  dev:\n    verifier: command\n")
	expectVerdict(t, mustVerifier(t, p, StepDev, StoryKey{"1", 1}, failing), false, "failed (exit status 3): FAIL: TestLogin")
	slow := pol("sandbox: off\nsteps:\n  dev:\n    verifier: command\n    command: sleep 30\n    commandTimeout: 50ms\n")
	c := mustVerifier(t, p, StepDev, StoryKey{"1", 1}, slow)
	if c.Name() != "command:sleep 30" {
		t.Errorf("name %q", c.Name())
	}
	expectVerdict(t, c, false, `"sleep 30" did not finish within 50ms`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := c.Verify(ctx); r.Verified || !strings.Contains(r.Detail, "cancelled") {
		t.Errorf("cancelled context: %+v", r)
	}
}

func TestCommandVerifierKillsTheProcessGroup(t *testing.T) {
	p := openProject(t)
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	pol, err := ParsePolicy("test", []byte("sandbox: off\nsteps:\n  dev:\n    verifier: command\n    command: sleep 30 & echo $! > "+pidFile+"; wait\n    commandTimeout: 200ms\n"))
	if err != nil {
		t.Fatal(err)
	}
	expectVerdict(t, mustVerifier(t, p, StepDev, StoryKey{"1", 1}, pol), false, "did not finish")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(data))
	deadline := time.Now().Add(5 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return // gone, or a zombie waiting for its reaper
		}
		if time.Now().After(deadline) {
			t.Fatalf("background child %s outlived the command's time bound", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCombinedVerifiersReportTheFirstFailure(t *testing.T) {
	p := openProject(t)
	pol, err := ParsePolicy("test", []byte("sandbox: off\ntestCommand: \"true\"\nsteps:\n  dev:\n    verifier: [command, dev_completion]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := mustVerifier(t, p, StepDev, StoryKey{"1", 3}, pol)
	if c.Name() != "command:true+dev_completion" {
		t.Errorf("name %q", c.Name())
	}
	expectVerdict(t, c, false, "dev_completion: story 1.3 is not review or done")
	expectVerdict(t, mustVerifier(t, p, StepDev, StoryKey{"1", 2}, pol), true, `"true" exited 0`)
}

func TestVerifierContractErrors(t *testing.T) {
	p := openProject(t)
	cases := []struct {
		step string
		key  StoryKey
		also error
	}{
		{"deploy", StoryKey{"1", 1}, ErrUnknownStep},
		{StepDev, StoryKey{"9", 9}, ErrStoryNotFound},
		{StepDev, StoryKey{Epic: "1"}, ErrInvalidKey},
		{StepRetro, StoryKey{Epic: "9"}, ErrEpicNotFound},
	}
	for _, c := range cases {
		_, err := p.Verifier(c.step, c.key, DefaultPolicy())
		if !errors.Is(err, ErrContract) || !errors.Is(err, c.also) {
			t.Errorf("Verifier(%s, %s) err = %v, want ErrContract and %v", c.step, c.key, err, c.also)
		}
	}
	// An empty command found only at verify time is a contract error too.
	c := &commandCheck{dir: p.Root}
	if r := c.Verify(context.Background()); !errors.Is(r.ContractErr, ErrContract) || r.Verified {
		t.Errorf("empty command: %+v", r)
	}
}

func TestVerifierLoadsTheProjectPolicy(t *testing.T) {
	p := openProject(t)
	writeFiles(t, p.Root, map[string]string{PolicyFile: "steps:\n  create:\n    verifier: session_exit\n"})
	c, err := p.Verifier(StepCreate, StoryKey{"2", 1}, nil)
	if err != nil || c.Name() != VerifySessionExit {
		t.Fatalf("Verifier with the project policy: %v, %v", c, err)
	}
	writeFiles(t, p.Root, map[string]string{PolicyFile: "steps:\n  create:\n    verifier: nope\n"})
	if _, err := p.Verifier(StepCreate, StoryKey{"2", 1}, nil); !errors.Is(err, ErrPolicy) || errors.Is(err, ErrContract) {
		t.Errorf("bad policy: err = %v, want ErrPolicy only", err)
	}
}
