package agentsim

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// bmadProject is a fresh copy of the embedded sample project.
func bmadProject(t *testing.T) *workflows.Layout {
	t.Helper()
	root := t.TempDir()
	if err := sample.WriteSample(root); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// actStep runs the BMAD behaviour for one step and returns its exit code and output.
func actStep(t *testing.T, p *workflows.Layout, env map[string]string) (int, string) {
	t.Helper()
	full := map[string]string{"PROJECT_ROOT": p.Root, child.EnvAttempt: "1"}
	for k, v := range env {
		full[k] = v
	}
	var out bytes.Buffer
	s := &Sim{Options: Options{Behaviour: BehaviourBMAD}, Out: &out, Getenv: func(k string) string { return full[k] },
		Now: func() time.Time { return time.Date(2026, 1, 6, 10, 0, 0, 0, time.UTC) }}
	return Run(context.Background(), s), out.String()
}

// verified runs the project's own verifier for a step.
func verified(t *testing.T, p *workflows.Layout, step string, key workflows.StoryKey) workflows.Result {
	t.Helper()
	check, err := p.Verifier(step, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return check.Verify(context.Background())
}

func TestBMADStepsDoTheWorkTheirVerifiersCheck(t *testing.T) {
	p := bmadProject(t)
	key := workflows.StoryKey{Epic: "1", Num: 1}
	for _, step := range []string{"create", "dev", "automate", "review"} {
		code, out := actStep(t, p, map[string]string{child.EnvStep: step, child.EnvStory: "1-1", child.EnvCycle: "1"})
		if code != 0 {
			t.Fatalf("%s exited %d: %s", step, code, out)
		}
		if r := verified(t, p, step, key); !r.Verified {
			t.Fatalf("%s not verified after the sim acted: %s", step, r.Detail)
		}
	}
	story, err := p.StoryFile(key)
	if err != nil || filepath.Base(story) != "1-1-greet-the-world.md" {
		t.Fatalf("story file %s %v", story, err)
	}
	text, _ := os.ReadFile(story)
	for _, want := range []string{"# Story 1.1: Greet the World", "Hello, world!", "- [x] Implement story 1.1", "Status: done",
		"### File List\n\n- sim-work/1-1-greet-the-world.txt\n- sim-work/1-1-greet-the-world.tests.md\n"} {
		if !strings.Contains(string(text), want) {
			t.Fatalf("story file lacks %q:\n%s", want, text)
		}
	}
	st, _ := p.StoryStatus(key)
	if st.Sprint != workflows.StatusDone {
		t.Fatalf("sprint status %q", st.Sprint)
	}
}

func TestBMADReviewNeedingCyclesLeavesNotesUntilItPasses(t *testing.T) {
	p := bmadProject(t)
	key := workflows.StoryKey{Epic: "1", Num: 2}
	env := map[string]string{child.EnvStory: "1.2", EnvFaults: "review-cycles:2@1.2"}
	for _, step := range []string{"create", "dev"} {
		env[child.EnvStep] = step
		if code, out := actStep(t, p, env); code != 0 {
			t.Fatalf("%s: %s", step, out)
		}
	}
	env[child.EnvStep], env[child.EnvCycle] = "review", "1"
	if code, out := actStep(t, p, env); code != 0 {
		t.Fatalf("review cycle 1 exited %d: %s", code, out)
	}
	if r := verified(t, p, "review", key); r.Verified {
		t.Fatal("review cycle 1 passed despite review-cycles:2")
	}
	notes, err := p.ReviewNotes(key)
	if err != nil || !strings.Contains(notes, "review cycle 1") {
		t.Fatalf("review notes %q %v", notes, err)
	}
	env[child.EnvCycle] = "2"
	actStep(t, p, env)
	if r := verified(t, p, "review", key); !r.Verified {
		t.Fatalf("review cycle 2: %s", r.Detail)
	}
	if notes, _ := p.ReviewNotes(key); notes != "" {
		t.Fatalf("open notes after approval: %q", notes)
	}
}

func TestBMADFaultsCrashOrFakeCompletionWithoutWork(t *testing.T) {
	p := bmadProject(t)
	log := filepath.Join(t.TempDir(), "sim.jsonl")
	env := map[string]string{child.EnvStep: "create", child.EnvStory: "1-3", EnvFaults: "crash:create:1@1-3, false:create:2", EnvSimLog: log, child.EnvRole: "primary"}
	if code, _ := actStep(t, p, env); code != 1 {
		t.Fatalf("crash exited %d", code)
	}
	env[child.EnvAttempt] = "2"
	if code, _ := actStep(t, p, env); code != 0 {
		t.Fatalf("false completion exited %d", code)
	}
	if files, _ := p.StoryFiles(workflows.StoryKey{Epic: "1", Num: 3}); len(files) != 0 {
		t.Fatalf("a faulty attempt wrote %v", files)
	}
	env[child.EnvAttempt] = "3"
	if code, _ := actStep(t, p, env); code != 0 {
		t.Fatal("attempt 3 has no fault and must work")
	}
	data, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"outcome":"fault-crash"`) || !strings.Contains(lines[1], `"fault-false"`) ||
		!strings.Contains(lines[2], `"role":"primary"`) {
		t.Fatalf("sim log:\n%s", data)
	}
}

func TestBMADRetroAppendsANoteAndMarksTheRetrospectiveDone(t *testing.T) {
	p := bmadProject(t)
	for i := 0; i < 2; i++ {
		if code, out := actStep(t, p, map[string]string{child.EnvStep: "retro", child.EnvEpic: "1", child.EnvStory: "epic-1"}); code != 0 {
			t.Fatalf("retro: %s", out)
		}
	}
	text, err := os.ReadFile(filepath.Join(p.ArtifactsDir, "epic-1-retro-2026-01-06.md"))
	if err != nil || strings.Count(string(text), "## Retrospective of epic 1") != 2 {
		t.Fatalf("retro file %v:\n%s", err, text)
	}
	sprint, _ := os.ReadFile(p.SprintStatusPath())
	if !strings.Contains(string(sprint), "epic-1-retrospective: done") || !strings.Contains(string(sprint), "# STATUS DEFINITIONS:") {
		t.Fatalf("sprint status:\n%s", sprint)
	}
}

func TestAnUnreadableFaultStopsTheSimLoudly(t *testing.T) {
	p := bmadProject(t)
	code, out := actStep(t, p, map[string]string{child.EnvStep: "create", child.EnvStory: "1-1", EnvFaults: "crash:create@1-x"})
	if code == 0 || !strings.Contains(out, "1-x") || !strings.Contains(out, EnvFaults) {
		t.Fatalf("exit %d: %s", code, out)
	}
	if f, _ := p.StoryFile(workflows.StoryKey{Epic: "1", Num: 1}); f != "" {
		t.Fatal("the sim did the step despite a fault it could not read")
	}
}

func TestParseFaults(t *testing.T) {
	got, err := ParseFaults("crash:dev:1, hang:review@1.3,review-cycles:3, review-never@auth-2, false:dev@1-2-greet-by-name, crash@1.02, crash:retro@epic-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{{Kind: FaultCrash, Step: "dev", Attempt: 1}, {Kind: FaultHang, Step: "review", Story: "1-3"},
		{Kind: FaultReviewCycles, Step: "review", Cycles: 3}, {Kind: FaultReviewNever, Step: "review", Story: "auth-2"},
		{Kind: FaultFalse, Step: "dev", Story: "1-2"}, {Kind: FaultCrash, Story: "1-2"}, {Kind: FaultCrash, Step: "retro", Story: "1"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	for _, bad := range []string{"explode", "crash:dev:zero", "review-cycles", "review-never:2", "crash:a:1:2", "crash@", "crash:dev@1-x", "hang@greet"} {
		if _, err := ParseFaults(bad); err == nil {
			t.Fatalf("%q parsed", bad)
		}
	}
}

func TestBMADCreateRefusesWithoutTheStoryInTheEpics(t *testing.T) {
	p := bmadProject(t)
	epics, err := p.EpicFiles()
	if err != nil || len(epics) == 0 {
		t.Fatalf("epics %v %v", epics, err)
	}
	for _, f := range epics {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	code, out := actStep(t, p, map[string]string{child.EnvStep: "create", child.EnvStory: "1-1", child.EnvCycle: "1"})
	if code == 0 || !strings.Contains(out, "no epics file") {
		t.Fatalf("create without epics exited %d: %s", code, out)
	}
	if f, _ := p.StoryFile(workflows.StoryKey{Epic: "1", Num: 1}); f != "" {
		t.Fatalf("a story was written from nothing: %s", f)
	}
}

// Under a real agent CLI (model-sim has the agent run agent-sim in its
// shell), a crash takes the agent's process down with it.
func TestBMADCrashKillsTheAgentItRunsUnder(t *testing.T) {
	p := bmadProject(t)
	agent := exec.Command("sleep", "600")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Done means the crash took the agent down and Wait reaped it, as it should.
		if err := agent.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Error(err)
		}
	}()
	full := map[string]string{"PROJECT_ROOT": p.Root, child.EnvAttempt: "1", child.EnvStep: "create",
		child.EnvStory: "1-1", EnvFaults: "crash:create"}
	var out bytes.Buffer
	s := &Sim{Options: Options{Behaviour: BehaviourBMAD, CrashKills: agent.Process.Pid}, Out: &out,
		Getenv: func(k string) string { return full[k] }}
	if code := Run(context.Background(), s); code != 1 {
		t.Fatalf("crash exited %d: %s", code, out.String())
	}
	err := agent.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the agent ended with %v, want SIGKILL", err)
	}
}

func TestBMADStepsWorkInTheStorysWorktree(t *testing.T) {
	p, wt := bmadProject(t), bmadProject(t)
	key := workflows.StoryKey{Epic: "1", Num: 1}
	code, out := actStep(t, p, map[string]string{child.EnvStep: "create", child.EnvStory: "1-1", child.EnvWorkDir: wt.Root})
	if code != 0 {
		t.Fatalf("create exited %d: %s", code, out)
	}
	if r := verified(t, wt, "create", key); !r.Verified {
		t.Fatalf("the worktree lacks the story: %s", r.Detail)
	}
	if r := verified(t, p, "create", key); r.Verified {
		t.Fatal("the sim wrote the story in the project root, not its worktree")
	}
}
