package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// killedMidRun leaves the state a SIGKILLed orchestrator leaves: story 1.1
// done, 1.2 in dev with an attempt that never ended, the marker active with a
// pid that no longer exists.
func killedMidRun(t *testing.T, h *harness) string {
	t.Helper()
	o := h.options()
	d := h.deps()
	store := h.store()
	st, path, err := loadOrPlan(store, o, d, &stateLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if err := claimMarker(context.Background(), store, st, o, h.clock); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	snapshot := []byte(nil)
	eng := &Engine{Steps: h.steps, Backlog: h.project, Git: h.repo, Marker: store, Clock: h.clock, Policy: h.policy,
		Save: func(s *State) error {
			if snapshot == nil && devRunning(s) {
				// 1.2's dev session exists and has not ended: freeze the file as a kill leaves it.
				snapshot, _ = RenderState(s)
				cancel()
			}
			if snapshot != nil {
				return nil
			}
			return SaveState(path, s)
		}}
	if out, err := eng.Run(ctx, st); err != nil || out != OutcomeInterrupted {
		t.Fatalf("the run stopped mid-story: %v %v", out, err)
	}
	if snapshot == nil {
		t.Fatal("1.2's dev step never ran: nothing to leave as a kill would")
	}
	if err := os.WriteFile(path, snapshot, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Modify(context.Background(), func(m *marker.Marker) error {
		m.Status, m.PauseReason, m.OwnerPid = marker.StatusActive, "", 1<<30
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return path
}

func devRunning(s *State) bool {
	dev := s.Unit("1-2").Step(StepDev)
	return len(dev.Attempts) == 1 && dev.Attempts[0].Session != "" && dev.Attempts[0].FinalState == ""
}

func TestResumeAfterKillRedoesOnlyTheUnverifiedStepAndClosesItsSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	h.project.retro["1"] = true
	path := killedMidRun(t, h)
	before, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	dev := before.Unit("1-2").Step(StepDev)
	if dev.Status != StatusRunning || dev.Attempts[0].FinalState != "" {
		t.Fatalf("fixture: 1.2 dev %+v", dev)
	}
	h.steps = &fakeSteps{}
	res, err := h.resume()
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	want := []string{"1-2/dev#2@sim", "1-2/automate#1@sim", "1-2/review#1@sim"}
	if got := h.steps.requests(); !slices.Equal(got, want) {
		t.Fatalf("resumed steps %v, want %v", got, want)
	}
	if !slices.Equal(h.steps.closed, []string{"sa-1-2-dev-1"}) {
		t.Fatalf("abandoned sessions closed: %v", h.steps.closed)
	}
	after := h.saved(res).Unit("1-2").Step(StepDev)
	if after.Attempts[0].FinalState != FinalInterrupted || after.Attempts[1].Role != RolePrimary {
		t.Fatalf("dev attempts after resume %+v", after.Attempts)
	}
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1", "1-2"}) {
		t.Fatalf("commits %v", got)
	}
}

func TestResumeFindsTheCommitAKilledRunAlreadyMade(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	// Rewind the state to "commit running", as if killed between commit and save.
	h.runThenRewindToCommit()
	if _, err := h.resume(); err != nil {
		t.Fatal(err)
	}
	if got := h.repo.committed(); len(got) != 1 {
		t.Fatalf("story committed twice: %v", got)
	}
	// The run that made it may have died before the index followed HEAD.
	if !slices.Equal(h.repo.synced, []string{"sha0"}) {
		t.Fatalf("index synced with %v, want the commit found", h.repo.synced)
	}
}

func TestInterruptPausesTheRunAndTheMarker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	ctx, cancel := context.WithCancel(context.Background())
	h.steps.script = func(c context.Context, req StepRequest) StepResult {
		if req.Step == StepDev {
			cancel()
			<-c.Done()
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res, err := h.run(ctx, h.options())
	if !errors.Is(err, ErrInterrupted) || res.Outcome != OutcomeInterrupted {
		t.Fatalf("err %v", err)
	}
	m, err := h.store().Read()
	if err != nil || m.Status != marker.StatusPaused || !strings.Contains(m.PauseReason, "interrupted") {
		t.Fatalf("marker %+v %v", m, err)
	}
	st := h.saved(res)
	dev := st.Unit("1-1").Step(StepDev)
	if st.Status != RunPaused || dev.Status != StatusPending || dev.Attempts[0].FinalState != FinalInterrupted {
		t.Fatalf("state %s dev %+v", st.Status, dev)
	}
	// The interrupted attempt does not count: resume starts dev with the primary agent, no backoff.
	h.steps.script = nil
	if _, err := h.resume(); err != nil {
		t.Fatal(err)
	}
	if got := h.clock.slept(); len(got) != 0 {
		t.Fatalf("resume waited %v", got)
	}
}

func TestSecondRunIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	lock, err := AcquireRunLock(h.root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrRunActive) {
		t.Fatalf("with the run lock held: %v", err)
	}
	lock.Release()
	if _, err := h.store().Create(context.Background(), &marker.Marker{Version: 1, Mode: marker.ModeStory,
		Status: marker.StatusActive, StoriesRemaining: 2, OwnerPid: os.Getpid()}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrRunActive) || Code(err) != "run_active" {
		t.Fatalf("with a live owner's marker: %v", err)
	}
}

func TestNewRunRefusesAPausedRunAndResumeWithoutOneFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	if _, err := h.resume(); !errors.Is(err, ErrNothingToResume) {
		t.Fatalf("resume with nothing: %v", err)
	}
	h.steps.script = func(context.Context, StepRequest) StepResult { return StepResult{FinalState: FinalCrashed} }
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrEscalated) {
		t.Fatal(err)
	}
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrRunPaused) || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("new run over a paused one: %v", err)
	}
}

func TestDirtyWorktreeRefusesANewRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.repo.touch("src/main.go")
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrDirtyWorktree) || !strings.Contains(err.Error(), "src/main.go") {
		t.Fatalf("err %v", err)
	}
	if _, err := h.store().Read(); !errors.Is(err, marker.ErrNotFound) {
		t.Fatalf("a refused run left a marker: %v", err)
	}
}

func TestParallelRunsIndependentStoriesSideBySideAndKeepsDependencyOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2", "1-3", "1-4")
	h.project.retro["1"] = true
	h.project.set("1-2", func(s *StoryInfo) { s.DependsOn = []string{"1-1"} })
	h.project.set("1-3", func(s *StoryInfo) { s.DependsOn = []string{"1-2"} })
	var mu sync.Mutex
	var events []string
	fourStarted := make(chan struct{})
	var once sync.Once
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		mu.Lock()
		events = append(events, req.Story+"/"+req.Step)
		mu.Unlock()
		if req.Story == "1-4" {
			once.Do(func() { close(fourStarted) })
		}
		if req.Story == "1-1" && req.Step == StepCreate {
			select { // 1.1 only finishes once the independent 1.4 runs beside it
			case <-fourStarted:
			case <-time.After(10 * time.Second):
				t.Errorf("story 1.4 never ran beside 1.1")
			}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	o := h.options()
	o.Parallel = 3
	if _, err := h.run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	commits := h.repo.committed()
	pos := func(k string) int { return slices.Index(commits, k) }
	if len(commits) != 4 || pos("1-1") > pos("1-2") || pos("1-2") > pos("1-3") {
		t.Fatalf("commit order %v", commits)
	}
	first := func(story string) int { return slices.Index(events, story+"/create") }
	last := func(story string) int { return slices.Index(events, story+"/review") }
	if first("1-2") < last("1-1") || first("1-3") < last("1-2") {
		t.Fatalf("a story started before its dependency was done: %v", events)
	}
}

func TestANewRunSupersedesAnOldRunWhoseMarkerWasRemoved(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.steps.script = func(context.Context, StepRequest) StepResult { return StepResult{FinalState: FinalCrashed} }
	old, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) {
		t.Fatal(err)
	}
	if _, err := h.store().Remove(context.Background()); err != nil { // the human drops the escalated run
		t.Fatal(err)
	}
	h.steps.script = nil
	if _, err := h.run(context.Background(), h.options()); err != nil {
		t.Fatalf("new run: %v", err)
	}
	if _, err := h.resume(); !errors.Is(err, ErrNothingToResume) {
		t.Fatalf("resume after the new run finished: %v", err)
	}
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1"}) {
		t.Fatalf("commits %v: the old run came back", got)
	}
	if st := h.saved(old); st.Status != RunSuperseded {
		t.Fatalf("old run's status %s", st.Status)
	}
}

func TestResumeOfAMovedProjectSettlesItsMarker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.steps.script = func(context.Context, StepRequest) StepResult { return StepResult{FinalState: FinalCrashed} }
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrEscalated) {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(h.root, moved); err != nil {
		t.Fatal(err)
	}
	h.root = moved
	h.steps.script = nil
	res, err := h.resume()
	if err != nil {
		t.Fatalf("resume in the moved project: %v", err)
	}
	if _, err := h.store().Read(); !errors.Is(err, marker.ErrNotFound) {
		t.Fatalf("the finished run left its marker: %v", err)
	}
	st := h.saved(res)
	if !strings.HasPrefix(res.StatePath, moved) || st.Config.StateFile != res.StatePath || st.ProjectRoot != moved {
		t.Fatalf("state %s config %+v root %s", res.StatePath, st.Config, st.ProjectRoot)
	}
}

func TestResumeContinuesOnlyTheMarkersRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.steps.script = func(context.Context, StepRequest) StepResult { return StepResult{FinalState: FinalCrashed} }
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrEscalated) {
		t.Fatal(err)
	}
	m, err := h.store().Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(m.StateFile); err != nil {
		t.Fatal(err)
	}
	if _, err := h.resume(); !errors.Is(err, ErrNothingToResume) || !strings.Contains(err.Error(), "marker remove") {
		t.Fatalf("resume with the marker's document gone: %v", err)
	}
}

func TestResumeKeepsTheRunsSettingsUnlessGivenAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	reviews := 0
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		switch {
		case req.Step == StepDev && req.Attempt == 1:
			return StepResult{FinalState: FinalCrashed}
		case req.Step == StepReview:
			reviews++
			return StepResult{FinalState: FinalIncomplete}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	backoff, grace := 7*time.Second, time.Second
	o := h.options()
	o.Model, o.MaxCycles, o.Backoff, o.CompletionRechecks, o.RecheckGrace = "m1", 2, DurationOf(backoff), 2, DurationOf(grace)
	if _, err := h.run(context.Background(), o); !errors.Is(err, ErrEscalated) {
		t.Fatal(err)
	}
	if reviews != 2 || !slices.Equal(h.clock.slept(), []time.Duration{7 * time.Second}) {
		t.Fatalf("reviews %d, waits %v", reviews, h.clock.slept())
	}
	o = h.options()
	o.Resume = true
	res, err := h.run(context.Background(), o)
	if !errors.Is(err, ErrEscalated) || reviews != 4 {
		t.Fatalf("resume without settings: %v after %d reviews (want the run's 2 cycles more)", err, reviews)
	}
	want := RunConfig{Model: "m1", MaxCycles: 2, Backoff: DurationOf(backoff), CompletionRechecks: 2, RecheckGrace: DurationOf(grace)}
	for i, c := range h.steps.configured {
		if c.Model != want.Model || c.MaxCycles != want.MaxCycles || c.Backoff != want.Backoff ||
			c.CompletionRechecks != want.CompletionRechecks || c.RecheckGrace != want.RecheckGrace {
			t.Fatalf("configure %d: %+v", i, c)
		}
	}
	if cfg := h.saved(res).Config; cfg.Model != "m1" || cfg.Backoff.String() != "7s" || cfg.RecheckGrace.String() != "1s" {
		t.Fatalf("saved configuration %+v", cfg)
	}
	o.MaxCycles, o.Model = 3, "m2"
	if _, err := h.run(context.Background(), o); !errors.Is(err, ErrEscalated) || reviews != 7 {
		t.Fatalf("resume with --max-cycles 3: %v after %d reviews", err, reviews)
	}
	if last := h.steps.configured[len(h.steps.configured)-1]; last.Model != "m2" || last.Backoff.String() != "7s" {
		t.Fatalf("given again: %+v", last)
	}
}

func TestAFailedLookupForAnEarlierCommitIsRetriedNotIgnored(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	// Killed between the commit and saving it; on resume the first lookup fails.
	h.runThenRewindToCommit()
	h.repo.findErr = 1
	if _, err := h.resume(); err != nil {
		t.Fatal(err)
	}
	if got := h.repo.committed(); len(got) != 1 {
		t.Fatalf("story committed twice: %v", got)
	}
	// A lookup that keeps failing escalates instead of committing blind.
	h2 := newHarness(t, "1-1")
	h2.repo.findErr = 100
	res, err := h2.run(context.Background(), h2.options())
	if !errors.Is(err, ErrEscalated) || !strings.Contains(res.State.Escalation.Reason, "earlier commit") || len(h2.repo.committed()) != 0 {
		t.Fatalf("err %v commits %v", err, h2.repo.committed())
	}
}
