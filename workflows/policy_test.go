package workflows

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy()
	want := map[string]struct {
		verifier string
		optional bool
		action   string
	}{
		StepCreate:   {VerifyCreateStoryArtifact, false, ActionAgent},
		StepDev:      {VerifyDevCompletion, false, ActionAgent},
		StepAutomate: {VerifySessionExit, true, ActionAgent},
		StepReview:   {VerifyReviewCompletion, false, ActionAgent},
		StepCommit:   {VerifySessionExit, false, ActionGitCommit},
		StepRetro:    {VerifyEpicComplete, true, ActionAgent},
	}
	for name, w := range want {
		s, err := p.Step(name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Verifiers, []string{w.verifier}) || s.Optional != w.optional || s.Action != w.action ||
			!s.Enabled || s.Retries != 2 || s.Timeout <= 0 || s.Agent != "" || s.FallbackAgent != "" {
			t.Errorf("default %s = %+v", name, *s)
		}
	}
	if p.MaxReviewCycles() != 5 || p.TestCommand != "" || p.TestTimeout != 10*time.Minute {
		t.Errorf("maxCycles %d, testCommand %q, testTimeout %s", p.MaxReviewCycles(), p.TestCommand, p.TestTimeout)
	}
	if _, err := p.Step("deploy"); !errors.Is(err, ErrUnknownStep) || Code(err) != "unknown_step" {
		t.Errorf("Step(deploy) err = %v", err)
	}
}

func TestLoadPolicyOverridesOnlyWhatTheFileSets(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{PolicyFile: `
version: 1
testCommand: go test ./...
steps:
  dev:
    agent: codex
    fallbackAgent: claude
    timeout: 2h
    verifier: [dev_completion, command]
    commandTimeout: 3m
  automate:
    enabled: false
  review:
    maxCycles: 3
    retries: 0
  commit:
    action: agent
`})
	p, err := LoadPolicy(root)
	if err != nil {
		t.Fatal(err)
	}
	dev := p.Steps[StepDev]
	if dev.Agent != "codex" || dev.FallbackAgent != "claude" || dev.Timeout != 2*time.Hour ||
		!slices.Equal(dev.Verifiers, []string{VerifyDevCompletion, VerifyCommand}) || dev.Retries != 2 || dev.Backoff != 10*time.Second {
		t.Errorf("dev = %+v", *dev)
	}
	if cmd, limit := p.CommandFor(dev); cmd != "go test ./..." || limit != 3*time.Minute {
		t.Errorf("CommandFor(dev) = %q %s", cmd, limit)
	}
	if cmd, limit := p.CommandFor(p.Steps[StepReview]); cmd != "go test ./..." || limit != 10*time.Minute {
		t.Errorf("CommandFor(review) = %q %s", cmd, limit)
	}
	if p.Steps[StepAutomate].Enabled || p.MaxReviewCycles() != 3 || p.Steps[StepReview].Retries != 0 || p.Steps[StepCommit].Action != ActionAgent {
		t.Errorf("automate %+v review %+v commit %+v", *p.Steps[StepAutomate], *p.Steps[StepReview], *p.Steps[StepCommit])
	}
	if p.Steps[StepCreate].Timeout != 30*time.Minute {
		t.Errorf("create timeout changed: %s", p.Steps[StepCreate].Timeout)
	}
	if !slices.Equal(p.Sources, []string{"defaults", PolicyFile}) {
		t.Errorf("Sources = %v", p.Sources)
	}
}

func TestLoadPolicyWithoutFileIsTheDefault(t *testing.T) {
	p, err := LoadPolicy(t.TempDir())
	if err != nil || p.MaxReviewCycles() != 5 || len(p.Sources) != 1 {
		t.Fatalf("LoadPolicy(empty) = %+v, %v", p, err)
	}
	if p, err := ParsePolicy("empty", []byte("# nothing\n")); err != nil || p.MaxReviewCycles() != 5 {
		t.Errorf("empty document: %v", err)
	}
}

func TestPolicyValidationNamesTheKey(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"vresion: 1\n", "vresion: unknown key"},
		{"version: 2\n", "version: unsupported version 2"},
		{"steps:\n  deploy: {}\n", "steps.deploy: unknown step"},
		{"steps:\n  dev:\n    timeot: 5m\n", "steps.dev.timeot: unknown key"},
		{"steps:\n  dev:\n    timeout: soon\n", `steps.dev.timeout: must be a positive duration such as 90s or 30m, got "soon" (line 3)`},
		{"steps:\n  dev:\n    timeout: 0s\n", "steps.dev.timeout: must be a positive duration"},
		{"steps:\n  dev:\n    retries: two\n", `steps.dev.retries: must be a whole number, got "two"`},
		{"steps:\n  dev:\n    retries: -1\n", "steps.dev.retries: must be between 0 and 20"},
		{"steps:\n  dev:\n    optional: maybe\n", `steps.dev.optional: must be true or false, got "maybe"`},
		{"steps:\n  dev:\n    verifier: tests_pass\n", `steps.dev.verifier: unknown verifier "tests_pass"`},
		{"steps:\n  dev:\n    verifier: []\n", "steps.dev.verifier: must be a verifier name or a list"},
		{"steps:\n  dev:\n    verifier: command\n", `steps.dev.verifier: "command" needs testCommand or steps.dev.command`},
		{"steps:\n  dev:\n    agent: Claude Code\n", `steps.dev.agent: agent "Claude Code" must be a lower-case name`},
		{"steps:\n  dev:\n    maxCycles: 3\n", "steps.dev.maxCycles: only the review step has cycles"},
		{"steps:\n  review:\n    maxCycles: 0\n", "steps.review.maxCycles: must be between 1 and 50"},
		{"steps:\n  dev:\n    action: git_commit\n", "steps.dev.action: git_commit is only for the commit step"},
		{"steps:\n  dev:\n    action: shell\n", `steps.dev.action: must be agent or git_commit, got "shell"`},
		{"steps: [create]\n", "steps: must be a mapping"},
		{"steps:\n  dev:\n    command: [a]\n", "steps.dev.command: must be a string"},
		{"- 1\n", "policy: must be a mapping"},
		{"steps: {dev: {timeout: 1m}\n", "invalid workflow policy"},
	}
	for _, c := range cases {
		_, err := ParsePolicy("workflow.yaml", []byte(c.doc))
		if !errors.Is(err, ErrPolicy) || Code(err) != "policy_invalid" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v\nwant policy_invalid containing %q", c.doc, err, c.want)
		}
	}
	_, err := ParsePolicy("workflow.yaml", []byte("bogus: 1\nsteps:\n  dev:\n    retries: x\n"))
	if err == nil || !strings.Contains(err.Error(), "bogus") || !strings.Contains(err.Error(), "steps.dev.retries") {
		t.Errorf("several problems are all reported: %v", err)
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{PolicyFile: "steps:\n  dev:\n    timeot: 5m\n"})
	if _, err := LoadPolicy(root); err == nil || !strings.Contains(err.Error(), ".story-automator/workflow.yaml: steps.dev.timeot") {
		t.Errorf("LoadPolicy error does not name the file: %v", err)
	}
}

func TestStepLists(t *testing.T) {
	if got := strings.Join(StorySteps(), ","); got != "create,dev,automate,review,commit" {
		t.Errorf("StorySteps = %s", got)
	}
	if got := strings.Join(AllSteps(), ","); got != "create,dev,automate,review,commit,retro" {
		t.Errorf("AllSteps = %s", got)
	}
}

func TestPolicyReadsPlanCheckpoint(t *testing.T) {
	p, err := ParsePolicy("w.yaml", []byte("planCheckpoint: true\n"))
	if err != nil || !p.PlanCheckpoint {
		t.Fatalf("%+v %v", p.PlanCheckpoint, err)
	}
	if _, err := ParsePolicy("w.yaml", []byte("planCheckpoint: sometimes\n")); err == nil || !strings.Contains(err.Error(), "planCheckpoint") {
		t.Fatalf("a non-boolean planCheckpoint: %v", err)
	}
}
