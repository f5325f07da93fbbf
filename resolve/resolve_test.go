package resolve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

const specRel = "_bmad-output/implementation-artifacts/spec-1-1-sign-up.md"

// project is a project whose run escalated story 1.1 at its dev step
// (blocked spec, the worker's last attempt and its output) with 1.2 done.
type project struct {
	root, state, spec string
}

func newProject(t *testing.T, specText string) project {
	t.Helper()
	root := t.TempDir()
	p := project{root: root, state: filepath.Join(orchestrator.RunsDir(root), "run-20261129-010000-abcd.md"),
		spec: filepath.Join(root, filepath.FromSlash(specRel))}
	out := filepath.Join(root, "out.log")
	if err := os.WriteFile(out, []byte("agent-sim build-auto: blocked\nHALT: intent gap\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dev := &orchestrator.StepState{Name: orchestrator.StepDev, Status: orchestrator.StatusEscalated, Note: "blocked: intent gap",
		Attempts: []orchestrator.Attempt{{N: 1, Agent: "sim", FinalState: orchestrator.FinalIncomplete, Reason: "spec blocked",
			Verifier: "build-auto", Detail: "the spec says blocked", OutputFile: out}}}
	st := &orchestrator.State{Version: orchestrator.StateVersion, RunID: "20261129-010000-abcd", Status: orchestrator.RunPaused, ProjectRoot: root,
		Config: orchestrator.RunConfig{Agent: "sim"},
		Units: []*orchestrator.Unit{
			{Key: "1-1", Kind: orchestrator.KindStory, Epic: "1", Dotted: "1.1", Title: "sign up", Status: orchestrator.StatusEscalated,
				Spec: specRel, Steps: []*orchestrator.StepState{dev, {Name: orchestrator.StepCommit, Status: orchestrator.StatusPending}}},
			{Key: "1-2", Kind: orchestrator.KindStory, Epic: "1", Dotted: "1.2", Status: orchestrator.StatusDone},
		},
		Escalation: &orchestrator.Escalation{Unit: "1.1", Step: orchestrator.StepDev, Reason: "dev story of 1.1: blocked \"intent gap\"",
			Code: "build_auto_blocked", Action: "answer the questions in the spec"}}
	if err := orchestrator.SaveState(p.state, st); err != nil {
		t.Fatal(err)
	}
	if specText != "" {
		write(t, p.spec, specText)
	}
	return p
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func spec(status, baseline, result string) string {
	text := "---\ntitle: 'sign up'\nstatus: '" + status + "' # draft | ready-for-dev | in-progress | in-review | done | blocked\n"
	if baseline != "" {
		text += "baseline_revision: " + baseline + "\n"
	}
	return text + "---\n\n# sign up\n\n## Plan\n\nthe plan\n" + result
}

const blockedResult = "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: intent gap\n"

func (p project) load(t *testing.T) *orchestrator.State {
	t.Helper()
	st, err := orchestrator.LoadState(p.state)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (p project) specStatus(t *testing.T) string {
	t.Helper()
	s, err := workflows.ReadSpec(p.spec)
	if err != nil {
		t.Fatal(err)
	}
	return s.Status
}

func (p project) resolver(s Session) Resolver {
	return Resolver{Root: p.root, Getenv: func(string) string { return "" }, Session: s,
		Now: func() time.Time { return time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC) }}
}

// checkRearmed: the unit and its step pending, the step with a fresh
// budget and checked first, the run's escalation gone, the resolve logged.
func checkRearmed(t *testing.T, st *orchestrator.State, logWants ...string) {
	t.Helper()
	u := st.Unit("1-1")
	dev := u.Step(orchestrator.StepDev)
	if u.Status != orchestrator.StatusPending || dev.Status != orchestrator.StatusPending || dev.BudgetFrom != 1 || !dev.VerifyFirst || st.Escalation != nil {
		t.Fatalf("unit %s, dev %+v, escalation %+v", u.Status, dev, st.Escalation)
	}
	last := st.Log[len(st.Log)-1]
	for _, w := range logWants {
		if !strings.Contains(last.Message, w) {
			t.Errorf("log %q lacks %q", last.Message, w)
		}
	}
}

// fakeSession is a resolve session: what it does to the project, and how it ends.
type fakeSession struct {
	do    func()
	err   error
	brief string
}

func (f *fakeSession) Run(_ context.Context, _ *Target, brief string) error {
	f.brief = brief
	if f.do != nil {
		f.do()
	}
	return f.err
}

// --no-interactive: a blocked spec that was implemented goes back to
// ready-for-dev (its comment kept); one that never was, to draft.
func TestScriptedResolveRearmsTheSpecAndTheState(t *testing.T) {
	p := newProject(t, spec(workflows.SpecBlocked, "abc123", blockedResult))
	res, err := p.resolver(nil).Resolve(context.Background(), Options{Story: "1.1", Message: "answered the questions"})
	if err != nil {
		t.Fatal(err)
	}
	if res.SpecFrom != workflows.SpecBlocked || res.SpecTo != workflows.SpecReadyForDev || p.specStatus(t) != workflows.SpecReadyForDev {
		t.Fatalf("result %+v, spec %s", res, p.specStatus(t))
	}
	if data, _ := os.ReadFile(p.spec); !strings.Contains(string(data), "status: 'ready-for-dev' # draft |") {
		t.Fatalf("the status line's comment is lost:\n%s", data)
	}
	checkRearmed(t, p.load(t), "answered the questions", "blocked → ready-for-dev", orchestrator.ResumeCommand)

	p = newProject(t, spec(workflows.SpecBlocked, "", blockedResult))
	if res, err := p.resolver(nil).Resolve(context.Background(), Options{Story: "1-1-sign-up"}); err != nil || res.SpecTo != workflows.SpecDraft {
		t.Fatalf("no baseline: %+v %v", res, err)
	}
	checkRearmed(t, p.load(t), "blocked → draft")
}

// A session that ended normally: a plan changed sends the spec to draft,
// a status the person set is kept; the brief carries the escalation.
func TestSessionEndedNormallyRearmsPerWhatChanged(t *testing.T) {
	p := newProject(t, spec(workflows.SpecBlocked, "abc123", blockedResult))
	s := &fakeSession{do: func() {
		write(t, p.spec, strings.Replace(spec(workflows.SpecBlocked, "abc123", blockedResult), "the plan", "the plan, answered", 1))
	}}
	res, err := p.resolver(s).Resolve(context.Background(), Options{Story: "1-1"})
	if err != nil || res.SpecTo != workflows.SpecDraft {
		t.Fatalf("plan changed: %+v %v", res, err)
	}
	checkRearmed(t, p.load(t), "in a session", "blocked → draft")
	for _, want := range []string{"story 1.1 (sign up), escalated at its dev step", `blocked "intent gap"`, "build_auto_blocked",
		"answer the questions in the spec", specRel + " (status blocked)", "Blocking condition: intent gap", "Verifier build-auto: the spec says blocked",
		"    HALT: intent gap", p.state} {
		if !strings.Contains(s.brief, want) {
			t.Errorf("the brief lacks %q:\n%s", want, s.brief)
		}
	}

	p = newProject(t, spec(workflows.SpecBlocked, "abc123", blockedResult))
	s = &fakeSession{do: func() { write(t, p.spec, spec(workflows.SpecInReview, "abc123", blockedResult)) }}
	if res, err := p.resolver(s).Resolve(context.Background(), Options{Story: "1.1"}); err != nil || res.SpecTo != "" || p.specStatus(t) != workflows.SpecInReview {
		t.Fatalf("status set by the person: %+v %v", res, err)
	}
	checkRearmed(t, p.load(t))
}

// A session that did not end normally (killed) re-arms nothing: the state
// document and the spec are as they were, and the error says so.
func TestSessionKilledLeavesTheStoryEscalated(t *testing.T) {
	p := newProject(t, spec(workflows.SpecBlocked, "abc123", blockedResult))
	state, _ := os.ReadFile(p.state)
	specBefore, _ := os.ReadFile(p.spec)
	_, err := p.resolver(&fakeSession{err: errors.New("the resolve session x was killed")}).Resolve(context.Background(), Options{Story: "1.1"})
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != CodeSessionEnded || !strings.Contains(ce.Action, "stays escalated") {
		t.Fatalf("error %v", err)
	}
	if now, _ := os.ReadFile(p.state); string(now) != string(state) {
		t.Fatal("the state document changed")
	}
	if now, _ := os.ReadFile(p.spec); string(now) != string(specBefore) {
		t.Fatal("the spec changed")
	}
}

// A story that is not blocked, one the run does not have, and a run that
// holds the project are refused with their codes, nothing changed.
func TestRefusals(t *testing.T) {
	p := newProject(t, spec(workflows.SpecBlocked, "abc123", blockedResult))
	state, _ := os.ReadFile(p.state)
	codeOf := func(err error) string {
		var ce *coded.Error
		if errors.As(err, &ce) {
			return ce.Code + ": " + ce.Action
		}
		return "not coded: " + err.Error()
	}
	if _, err := p.resolver(nil).Resolve(context.Background(), Options{Story: "1.2"}); !strings.HasPrefix(codeOf(err), CodeNotBlocked+": ") ||
		!strings.Contains(codeOf(err), "1.1 (escalated)") {
		t.Fatalf("done story: %v", err)
	}
	if _, err := p.resolver(nil).Resolve(context.Background(), Options{Story: "9.9"}); !strings.HasPrefix(codeOf(err), CodeUnknownStory+": ") {
		t.Fatalf("unknown story: %v", err)
	}
	lock, err := orchestrator.AcquireRunLock(p.root)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.resolver(nil).Resolve(context.Background(), Options{Story: "1.1"})
	lock.Release()
	if !strings.HasPrefix(codeOf(err), CodeRunActive+": ") {
		t.Fatalf("run active: %v", err)
	}
	if _, err := p.resolver(nil).Resolve(context.Background(), Options{Story: "1.1", RestorePatch: true}); !strings.HasPrefix(codeOf(err), CodeNoPatch+": ") {
		t.Fatalf("no patch: %v", err)
	}
	if now, _ := os.ReadFile(p.state); string(now) != string(state) {
		t.Fatal("a refusal changed the state document")
	}
	if _, err := (Resolver{Root: t.TempDir()}).Resolve(context.Background(), Options{Story: "1.1"}); !strings.HasPrefix(codeOf(err), CodeNoRun+": ") {
		t.Fatalf("no run: %v", err)
	}
}

// --restore-patch applies the patch the spec names (once: one applied
// already is not applied again) and sends the story to review.
func TestRestorePatchAppliesTheSavedPatchAndSendsTheStoryToReview(t *testing.T) {
	result := blockedResult + "\nUnresolved: which currency?\nSaved patch: `_bmad-output/implementation-artifacts/intent-gap-1-1.patch`\n"
	p := newProject(t, spec(workflows.SpecBlocked, "abc123", result))
	patch := filepath.Join(p.root, "_bmad-output", "implementation-artifacts", "intent-gap-1-1.patch")
	write(t, patch, "diff --git a/x b/x\n")
	var calls []string
	applied := false
	r := p.resolver(nil)
	r.Git = func(_ context.Context, dir string, args ...string) ([]byte, error) {
		calls = append(calls, dir+": "+strings.Join(args, " "))
		if args[1] == "--check" && !applied {
			return []byte("error: patch does not apply"), errors.New("exit 1")
		}
		applied = true
		return nil, nil
	}
	res, err := r.Resolve(context.Background(), Options{Story: "1.1", RestorePatch: true})
	if err != nil || res.SpecTo != workflows.SpecInReview || res.Patch != "_bmad-output/implementation-artifacts/intent-gap-1-1.patch" {
		t.Fatalf("%+v %v", res, err)
	}
	want := []string{p.root + ": apply --check --reverse " + patch, p.root + ": apply " + patch}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("git calls:\n%s", strings.Join(calls, "\n"))
	}
	checkRearmed(t, p.load(t), "intent-gap patch", "blocked → in-review")
}

// The patch is found by the name the spec gives it, else as the newest
// .patch beside the spec that names the story.
func TestIntentGapPatchIsFoundByNameOrBesideTheSpec(t *testing.T) {
	p := newProject(t, spec(workflows.SpecBlocked, "abc123", blockedResult))
	tg, err := Find(p.root, func(string) string { return "" }, "1.1")
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.IntentGapPatch(); got != "" {
		t.Fatalf("no patch yet: %q", got)
	}
	dir := filepath.Dir(p.spec)
	write(t, filepath.Join(dir, "other-2-1.patch"), "x")
	beside := filepath.Join(dir, "review-1-1-attempt.patch")
	write(t, beside, "x")
	if got := tg.IntentGapPatch(); got != beside {
		t.Fatalf("beside: %q", got)
	}
	named := filepath.Join(dir, "attempt.diff")
	write(t, named, "x")
	write(t, p.spec, spec(workflows.SpecBlocked, "abc123", blockedResult+"Saved patch: {implementation_artifacts}/attempt.diff\n"))
	if got := tg.IntentGapPatch(); got != named {
		t.Fatalf("named: %q", got)
	}
}

// A story parked in the project's tree has its work, its spec among it,
// on its ref and not in the tree: resolve brings it back first, then
// re-arms the story with a fresh base (other stories landed meanwhile) and
// its park record gone.
func TestResolveBringsAParkedStorysWorkBackFirst(t *testing.T) {
	p := newProject(t, "")
	st := p.load(t)
	u := st.Unit("1-1")
	u.Status, u.Base = orchestrator.StatusParked, "base0"
	u.Parked = &orchestrator.Parked{Step: orchestrator.StepDev, Reason: "blocked", Ref: orchestrator.ParkRef(st.RunID, "1-1")}
	st.Escalation = nil
	if err := orchestrator.SaveState(p.state, st); err != nil {
		t.Fatal(err)
	}
	var asked string
	r := p.resolver(nil)
	r.Unpark = func(_ context.Context, ref string) (bool, error) {
		asked = ref
		write(t, p.spec, spec(workflows.SpecBlocked, "abc123", blockedResult))
		return true, nil
	}
	res, err := r.Resolve(context.Background(), Options{Story: "1.1"})
	if err != nil {
		t.Fatal(err)
	}
	if asked != orchestrator.ParkRef(st.RunID, "1-1") || res.Unparked != asked || res.SpecTo != workflows.SpecReadyForDev {
		t.Fatalf("unparked %q, result %+v", asked, res)
	}
	after := p.load(t)
	if u := after.Unit("1-1"); u.Parked != nil || u.Base != "" {
		t.Fatalf("unit %+v", u)
	}
	checkRearmed(t, after, "parked work brought back from "+asked)

	// Work that no longer applies: nothing is re-armed, the story stays parked.
	p = newProject(t, "")
	st = p.load(t)
	st.Unit("1-1").Status = orchestrator.StatusParked
	if err := orchestrator.SaveState(p.state, st); err != nil {
		t.Fatal(err)
	}
	r = p.resolver(nil)
	r.Unpark = func(context.Context, string) (bool, error) { return false, errors.New("patch does not apply") }
	_, err = r.Resolve(context.Background(), Options{Story: "1.1"})
	if ce := (*coded.Error)(nil); !errors.As(err, &ce) || ce.Code != CodeUnparkFailed {
		t.Fatalf("err %v", err)
	}
	if u := p.load(t).Unit("1-1"); u.Status != orchestrator.StatusParked {
		t.Fatalf("unit %s", u.Status)
	}
}
