package orchestrator

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

func TestRunDrivesEveryStoryToOneCommitAndRemovesTheMarker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	h.project.retro["1"] = true
	res, err := h.run(context.Background(), h.options())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Outcome != OutcomeDone {
		t.Fatalf("outcome %s", res.Outcome)
	}
	want := []string{"1-1/create#1@sim", "1-1/dev#1@sim", "1-1/automate#1@sim", "1-1/review#1@sim",
		"1-2/create#1@sim", "1-2/dev#1@sim", "1-2/automate#1@sim", "1-2/review#1@sim"}
	if got := h.steps.requests(); !slices.Equal(got, want) {
		t.Fatalf("steps\n got %v\nwant %v", got, want)
	}
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1", "1-2"}) {
		t.Fatalf("commits %v", got)
	}
	for _, k := range []string{"1-1", "1-2"} {
		if h.project.status(k) != StatusDone {
			t.Fatalf("story %s status %q", k, h.project.status(k))
		}
	}
	if _, err := h.store().Read(); !errors.Is(err, marker.ErrNotFound) {
		t.Fatalf("marker after a finished run: %v", err)
	}
	st := h.saved(res)
	if st.Status != RunDone || st.StoriesRemaining() != 0 {
		t.Fatalf("state %s remaining %d", st.Status, st.StoriesRemaining())
	}
}

func TestHeartbeatOnVerifiedStepsAndRemainingFallsPerStory(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	h.project.retro["1"] = true
	type seen struct {
		heartbeat string
		remaining int
		story     string
	}
	var marks []seen
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		m, err := h.store().Read()
		if err != nil {
			t.Errorf("marker during %s/%s: %v", req.Story, req.Step, err)
			return StepResult{FinalState: FinalCompleted}
		}
		marks = append(marks, seen{m.Heartbeat, m.StoriesRemaining, m.CurrentStory})
		if m.OwnerPid != h.options().Pid || m.Status != marker.StatusActive {
			t.Errorf("marker owner pid %d status %s", m.OwnerPid, m.Status)
		}
		return StepResult{FinalState: FinalCompleted}
	}
	if _, err := h.run(context.Background(), h.options()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(marks); i++ {
		if marks[i].heartbeat == marks[i-1].heartbeat {
			t.Fatalf("step %d saw the same heartbeat as the one before: %v", i, marks)
		}
	}
	// Step 5 is 1.2's create: 1.1's commit lowered the count; 1.2's own steps then move currentStory.
	if marks[0].remaining != 2 || marks[3].remaining != 2 || marks[4].remaining != 1 || marks[len(marks)-1].story != "1.2" {
		t.Fatalf("storiesRemaining/currentStory as the steps saw them: %+v", marks)
	}
}

func TestCrashedStepRetriesAlternatingAgentsWithDoublingBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev && req.Attempt < 3 {
			return StepResult{FinalState: FinalCrashed, Reason: "exit_code_1"}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res := h.runOK()
	dev := h.saved(res).Unit("1-1").Step(StepDev)
	var roles []string
	for _, a := range dev.Attempts {
		roles = append(roles, a.Agent+"/"+a.Role+"/"+a.FinalState)
	}
	want := []string{"sim/primary/crashed", "alt/fallback/crashed", "sim/primary/completed"}
	if !slices.Equal(roles, want) {
		t.Fatalf("dev attempts %v, want %v", roles, want)
	}
	if got := h.clock.slept(); !slices.Equal(got, []time.Duration{10 * time.Second, 20 * time.Second}) {
		t.Fatalf("backoff sleeps %v", got)
	}
}

func TestExhaustedStepEscalatesPausesTheMarkerAndStopsTheRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev {
			return StepResult{FinalState: FinalIncomplete, Reason: "verifier_failed"}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) || Code(err) != "run_escalated" {
		t.Fatalf("err %v", err)
	}
	if res.Outcome != OutcomeEscalated {
		t.Fatalf("outcome %s", res.Outcome)
	}
	for _, r := range h.steps.requests() {
		if strings.HasPrefix(r, "1-2/") {
			t.Fatalf("the run went on to story 1.2 after escalating: %v", h.steps.requests())
		}
	}
	m, err := h.store().Read()
	if err != nil || m.Status != marker.StatusPaused || !strings.Contains(m.PauseReason, "dev") {
		t.Fatalf("marker %+v err %v", m, err)
	}
	st := h.saved(res)
	if st.Status != RunPaused || st.Escalation == nil || st.Escalation.Step != StepDev || st.Escalation.Action == "" {
		t.Fatalf("state %s escalation %+v", st.Status, st.Escalation)
	}
	if n := len(st.Unit("1-1").Step(StepDev).Attempts); n != 3 {
		t.Fatalf("dev attempts %d, want 1 + 2 retries", n)
	}
	doc, _ := RenderState(st)
	if !strings.Contains(string(doc), "## Escalation") || !strings.Contains(string(doc), "What to do") {
		t.Fatalf("document lacks the escalation:\n%s", doc)
	}
}

func TestReviewNeedingThreeCyclesPassesWithoutBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	var cycles []int
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepReview {
			cycles = append(cycles, req.Cycle)
			if req.Cycle < 3 {
				return StepResult{FinalState: FinalIncomplete, Reason: "review notes left"}
			}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	if _, err := h.run(context.Background(), h.options()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cycles, []int{1, 2, 3}) {
		t.Fatalf("review cycles %v", cycles)
	}
	if got := h.clock.slept(); len(got) != 0 {
		t.Fatalf("a new review cycle waited %v", got)
	}
}

func TestReviewThatNeverPassesEscalatesAfterMaxCyclesAndResumeGetsAFreshBudget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	passAt := 100
	var cycles []int
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepReview {
			cycles = append(cycles, req.Cycle)
			if req.Cycle < passAt {
				return StepResult{FinalState: FinalIncomplete}
			}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) || !strings.Contains(res.State.Escalation.Reason, "5 cycles") {
		t.Fatalf("err %v", err)
	}
	if !slices.Equal(cycles, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("cycles before escalation %v", cycles)
	}
	passAt = 7
	res, err = h.resume()
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if !slices.Equal(cycles, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("cycles after resume %v", cycles)
	}

	if got := h.steps.requests(); slices.Contains(got[5:], "1-1/dev#1@sim") || len(h.repo.committed()) != 1 {
		t.Fatalf("resume redid verified steps: %v commits %v", got, h.repo.committed())
	}
	if res.Outcome != OutcomeDone {
		t.Fatalf("outcome %s", res.Outcome)
	}
}

func TestOptionalStepFailureLetsTheStoryGoOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepAutomate {
			return StepResult{FinalState: FinalCrashed, Reason: "exit_code_2"}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res := h.runOK()
	u := h.saved(res).Unit("1-1")
	if u.Status != StatusDone || u.Step(StepAutomate).Status != StatusFailed || len(u.Step(StepAutomate).Attempts) != 3 {
		t.Fatalf("unit %s automate %+v", u.Status, u.Step(StepAutomate))
	}
}

func TestCommitFailureRetriesThenCommitsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.repo.failN = 1
	res := h.runOK()
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1"}) {
		t.Fatalf("commits %v", got)
	}
	if !strings.Contains(h.saved(res).Unit("1-1").Step(StepCommit).Note, "sha0") {
		t.Fatalf("commit note %q", h.saved(res).Unit("1-1").Step(StepCommit).Note)
	}
}

func TestACommitThatEscalatedIsCommittedOnResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.repo.failN = 3 // the first try and both retries
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrEscalated) {
		t.Fatal(err)
	}
	res, err := h.resume()
	if err != nil {
		t.Fatal(err)
	}
	commit := h.saved(res).Unit("1-1").Step(StepCommit)
	if commit.Status != StatusVerified || commit.VerifyFirst || len(h.repo.committed()) != 1 {
		t.Fatalf("commit step after resume %+v, commits %v", commit, h.repo.committed())
	}
}

func TestRetroRunsAfterTheEpicsLastStoryAndIsCommittedUnlessItFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	if _, err := h.run(context.Background(), h.options()); err != nil {
		t.Fatal(err)
	}
	if got := h.steps.requests(); got[len(got)-1] != "1/retro#1@sim" {
		t.Fatalf("last step %v", got)
	}
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1", "1-2", "epic-1-retro"}) {
		t.Fatalf("commits %v", got)
	}
	if c := h.repo.commits[2]; !c.Retro || c.Story.Epic != "1" {
		t.Fatalf("retro commit request %+v", c)
	}

	h = newHarness(t, "1-1")
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepRetro {
			return StepResult{FinalState: FinalCrashed}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res, err := h.run(context.Background(), h.options())
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("an optional retro failing must not fail the run: %v %s", err, res.Outcome)
	}
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1"}) {
		t.Fatalf("commits %v", got)
	}
}

func TestCommitByAnAgentWhenThePolicySaysSo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	sp := h.policy.Steps[StepCommit]
	sp.Action = ActionAgent
	h.policy.Steps[StepCommit] = sp
	if _, err := h.run(context.Background(), h.options()); err != nil {
		t.Fatal(err)
	}
	if got := h.steps.requests(); got[len(got)-1] != "1-1/commit#1@sim" || len(h.repo.committed()) != 0 {
		t.Fatalf("steps %v git commits %v", got, h.repo.committed())
	}
	if h.project.status("1-1") != StatusDone {
		t.Fatal("the story was not set done before its agent commit")
	}
}

func TestEscalationPausesTheMarkerAtOnceAndStopsTheOtherStories(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	sp := h.policy.Steps[StepDev]
	sp.Retries = 0
	h.policy.Steps[StepDev] = sp
	twoRunning := make(chan struct{})
	var sawMarker *marker.Marker
	h.steps.script = func(ctx context.Context, req StepRequest) StepResult {
		switch {
		case req.Story == "1-1" && req.Step == StepDev:
			<-twoRunning
			return StepResult{FinalState: FinalCrashed}
		case req.Story == "1-2" && req.Step == StepDev && req.Attempt == 1:
			close(twoRunning)
			select { // a long step: only the escalation ends it
			case <-ctx.Done():
				sawMarker, _ = h.store().Read()
			case <-time.After(10 * time.Second):
				t.Error("1.2's session was not stopped when 1.1 escalated")
			}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	o := h.options()
	o.Parallel = 2
	res, err := h.run(context.Background(), o)
	if !errors.Is(err, ErrEscalated) || res.Outcome != OutcomeEscalated {
		t.Fatalf("err %v outcome %v", err, res)
	}
	if sawMarker == nil || sawMarker.Status != marker.StatusPaused || !strings.Contains(sawMarker.PauseReason, "escalated") {
		t.Fatalf("the marker when 1.2 was stopped: %+v", sawMarker)
	}
	st := h.saved(res)
	dev := st.Unit("1-2").Step(StepDev)
	if st.Unit("1-2").Status != StatusPending || dev.Status != StatusPending || dev.Attempts[0].FinalState != FinalInterrupted ||
		!strings.Contains(dev.Attempts[0].Reason, "escalated") {
		t.Fatalf("1.2 after the escalation: %s %+v", st.Unit("1-2").Status, dev)
	}
	for _, l := range st.Log {
		if strings.Contains(l.Message, "paused by hand") {
			t.Fatalf("the escalation's own pause was taken for a human's: %v", l)
		}
	}
}

func TestResumeChecksAnEscalatedStepBeforeSpawningAnAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.policy.MaxCycles = 2
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepReview {
			return StepResult{FinalState: FinalIncomplete}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrEscalated) {
		t.Fatal(err)
	}
	before := len(h.steps.requests())
	// The human accepts the story as it is: set done in sprint-status.yaml.
	h.steps.verify = func(req StepRequest) bool { return req.Story == "1-1" && req.Step == StepReview }
	res, err := h.resume()
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if got := h.steps.requests(); len(got) != before {
		t.Fatalf("resume spawned agents %v", got[before:])
	}
	review := h.saved(res).Unit("1-1").Step(StepReview)
	if review.Status != StatusVerified || review.VerifyFirst || !strings.Contains(review.Note, "by hand") {
		t.Fatalf("review after resume %+v", review)
	}
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1"}) {
		t.Fatalf("commits %v", got)
	}
}

func TestAStaleRemainingCountNeverRaisesTheMarkers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	store := h.store()
	if _, err := store.Create(context.Background(), &marker.Marker{Version: 1, Mode: marker.ModeStory,
		Status: marker.StatusActive, StoriesRemaining: 1, StateFile: "/p/.story-automator/runs/run-x.md"}, false); err != nil {
		t.Fatal(err)
	}
	e := &Engine{Marker: store, Clock: h.clock, state: &State{RunID: "run-x"}}
	e.heartbeat(context.Background(), "1", "1.2", StepCommit, 2) // counted before another story finished
	if m, err := store.Read(); err != nil || m.StoriesRemaining != 1 {
		t.Fatalf("marker %+v %v", m, err)
	}
	e.heartbeat(context.Background(), "1", "1.3", StepCommit, 0)
	if m, _ := store.Read(); m.StoriesRemaining != 0 || m.Epic != "1" || m.CurrentStory != "1.3" {
		t.Fatalf("remaining %d epic %q story %q, want 0, 1, 1.3", m.StoriesRemaining, m.Epic, m.CurrentStory)
	}
}

func TestHeartbeatLeavesAMarkerThatIsNotTheRunsAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	store := h.store()
	for _, other := range []*marker.Marker{
		{Version: 1, Mode: marker.ModeLoop, Status: marker.StatusActive, StoriesRemaining: 3}, // a loop started with --replace
		{Version: 1, Mode: marker.ModeStory, Status: marker.StatusPaused, StoriesRemaining: 3, StateFile: "/p/.story-automator/runs/run-y.md"},
	} {
		if _, err := store.Create(context.Background(), other, true); err != nil {
			t.Fatal(err)
		}
		before, err := store.Read()
		if err != nil {
			t.Fatal(err)
		}
		e := &Engine{Marker: store, Clock: h.clock, state: &State{RunID: "run-x"}}
		e.heartbeat(context.Background(), "1", "1.1", StepCommit, 0)
		after, err := store.Read()
		if err != nil || !reflect.DeepEqual(before, after) {
			t.Fatalf("another run's marker was changed:\nbefore %+v\nafter  %+v (%v)", before, after, err)
		}
		if e.halting.Load() {
			t.Fatal("another run's paused marker stopped this run")
		}
	}
}
