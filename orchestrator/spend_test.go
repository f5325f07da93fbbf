package orchestrator

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/story-automator/story-automator/spend"
)

// turn is what every fake attempt reports spending.
var turn = spend.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 3000, CacheWriteTokens: 100}

// turnCost is turn priced at testPrice: 1000×3 + 200×15 + 3000×0.3 + 100×3.75 per million.
const turnCost = 0.007275

var testPrice = spend.Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}

func spendingHarness(t *testing.T, keys ...string) *harness {
	h := newHarness(t, keys...)
	h.project.retro["1"] = true
	h.policy.Prices = spend.PriceTable{"m1": testPrice}
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		u := turn
		return StepResult{FinalState: FinalCompleted, Usage: &u, Model: req.Model}
	}
	return h
}

func TestEveryTotalIsTheSumOfItsAttemptsRetriesIncluded(t *testing.T) {
	t.Parallel()
	h := spendingHarness(t, "1-1", "1-2")
	failedOnce := false
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		u := turn
		if req.Story == "1-1" && req.Step == StepDev && !failedOnce {
			failedOnce = true
			return StepResult{FinalState: FinalCrashed, Reason: "exit_code_1", Usage: &u, Model: "m1"}
		}
		if req.Story == "1-2" && req.Step == StepAutomate {
			return StepResult{FinalState: FinalCompleted, UsageNote: "usage not read: no transcript"}
		}
		return StepResult{FinalState: FinalCompleted, Usage: &u, Model: "m1"}
	}
	h.policy.Steps[StepDev] = StepPolicy{Enabled: true, Retries: 2, Timeout: time.Hour}
	res := h.runOK()
	st := h.saved(res)
	u1, u2 := st.Unit("1-1"), st.Unit("1-2")
	// 1.1: create, dev ×2, automate, review = 5 priced; 1.2: 3 priced, automate unread.
	if d := u1.Step(StepDev).Usage; d == nil || d.Attempts != 2 || d.Tokens() != 2*turn.Tokens() || d.Cost() != 2*turnCost {
		t.Errorf("dev step of 1.1: %+v", d)
	}
	if u1.Usage.Attempts != 5 || u1.Usage.Tokens() != 5*turn.Tokens() || u1.Usage.Cost() != 5*turnCost {
		t.Errorf("story 1.1: %+v", u1.Usage)
	}
	if u2.Usage.Attempts != 4 || u2.Usage.Unread != 1 || u2.Usage.Tokens() != 3*turn.Tokens() {
		t.Errorf("story 1.2: %+v", u2.Usage)
	}
	run := st.Usage
	if run.Attempts != 9 || run.Tokens() != 8*turn.Tokens() || run.InputTokens != 8*turn.InputTokens ||
		run.CacheWriteTokens != 8*turn.CacheWriteTokens || run.Cost() != 0.0582 {
		t.Errorf("run: %+v cost %v", run, run.Cost())
	}
	a := u2.Step(StepAutomate).Attempts[0]
	if a.Usage != nil || a.UsageNote != "usage not read: no transcript" {
		t.Errorf("unread attempt: %+v", a)
	}
}

func TestAModelWithoutAPriceHasTokensAndNoCost(t *testing.T) {
	t.Parallel()
	h := spendingHarness(t, "1-1")
	o := h.options()
	o.Model = "unknown-model"
	res, err := h.run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	st := h.saved(res)
	a := st.Unit("1-1").Step(StepDev).Attempts[0]
	if a.Model != "unknown-model" || a.Usage == nil || a.Usage.CostUSD != nil || a.Usage.Tokens() != turn.Tokens() || a.UsageNote == "" {
		t.Errorf("attempt %+v usage %+v", a, a.Usage)
	}
	if st.Usage.CostUSD != nil || st.Usage.Unpriced != 4 {
		t.Errorf("run usage %+v", st.Usage)
	}
}

func TestStepModelsReachTheirStepsAndTheRestGetTheRunsModel(t *testing.T) {
	t.Parallel()
	h := spendingHarness(t, "1-1")
	h.policy.Steps[StepCreate] = StepPolicy{Enabled: true, Retries: 2, Timeout: time.Hour, Model: "from-yaml"}
	h.policy.Steps[StepAutomate] = StepPolicy{Enabled: true, Retries: 2, Timeout: time.Hour, Model: "from-yaml", Optional: true}
	o := h.options()
	o.Model, o.StepModels = "M1", map[string]string{StepReview: "M2"}
	if _, err := h.run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range h.steps.reqs {
		got[r.Step] = r.Model
	}
	want := map[string]string{StepCreate: "M1", StepDev: "M1", StepAutomate: "M1", StepReview: "M2"}
	if !mapsEqual(got, want) {
		t.Errorf("models %v, want %v", got, want)
	}
	// Without --model, workflow.yaml's step model applies.
	h2 := spendingHarness(t, "1-1")
	h2.policy.Steps[StepCreate] = StepPolicy{Enabled: true, Retries: 2, Timeout: time.Hour, Model: "from-yaml"}
	if _, err := h2.run(context.Background(), h2.options()); err != nil {
		t.Fatal(err)
	}
	if r := h2.steps.reqs[0]; r.Step != StepCreate || r.Model != "from-yaml" || h2.steps.reqs[1].Model != "" {
		t.Errorf("requests %+v", h2.steps.reqs)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestMaxCostPausesBeforeTheNextAttemptAndResumeWithMoreGoesOn(t *testing.T) {
	t.Parallel()
	h := spendingHarness(t, "1-1", "1-2")
	o := h.options()
	o.Model = "m1"
	// Story 1.1's four attempts cost 4 × turnCost: reached after its review.
	o.Budget = &Budget{MaxCostUSD: 4 * turnCost}
	res, err := h.run(context.Background(), o)
	if !errors.Is(err, ErrBudgetExceeded) || Code(err) != CodeBudgetExceeded || res.Outcome != OutcomeBudgetExceeded {
		t.Fatalf("run: %v (%s) outcome %s", err, Code(err), res.Outcome)
	}
	want := []string{"1-1/create#1@sim", "1-1/dev#1@sim", "1-1/automate#1@sim", "1-1/review#1@sim"}
	if got := h.steps.requests(); !slices.Equal(got, want) {
		t.Fatalf("attempts %v, want %v: none after the limit", got, want)
	}
	if got := h.repo.committed(); !slices.Equal(got, []string{"1-1"}) {
		t.Errorf("commits %v: the verified story is kept", got)
	}
	st := h.saved(res)
	esc := st.Escalation
	if st.Status != RunPaused || esc == nil || esc.Code != CodeBudgetExceeded || esc.Unit != "1.2" || esc.Step != StepCreate {
		t.Fatalf("state %s escalation %+v", st.Status, esc)
	}
	if m, err := h.store().Read(); err != nil || m.Status != "paused" {
		t.Errorf("marker %+v %v", m, err)
	}
	if s := st.Unit("1-2").Step(StepCreate); s.Status != StatusPending || len(s.Attempts) != 0 {
		t.Errorf("the paused step %+v", s)
	}
	// Resumed with the same limit: paused again at once, nothing spent.
	ro := h.options()
	ro.Resume = true
	if _, err := h.run(context.Background(), ro); !errors.Is(err, ErrBudgetExceeded) || len(h.steps.requests()) != 4 {
		t.Fatalf("resume at the same limit: %v, %d attempts", err, len(h.steps.requests()))
	}
	ro.Budget = &Budget{MaxCostUSD: 1}
	res, err = h.run(context.Background(), ro)
	if err != nil {
		t.Fatalf("resume with a higher limit: %v", err)
	}
	st = h.saved(res)
	if st.Usage.Attempts != 8 || st.Usage.Cost() != 8*turnCost || st.Config.Budget.MaxCostUSD != 1 {
		t.Errorf("spend carried over: %+v, budget %+v", st.Usage, st.Config.Budget)
	}
}

func TestStoryBudgetAndTokenLimitPauseTheRunToo(t *testing.T) {
	t.Parallel()
	h := spendingHarness(t, "1-1")
	h.policy.StoryBudget = spend.Limits{MaxTokens: 2 * turn.Tokens()}
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("run: %v", err)
	}
	if n := len(h.steps.requests()); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
	if esc := h.saved(res).Escalation; esc == nil || esc.Step != StepAutomate || esc.Action == "" {
		t.Errorf("escalation %+v", esc)
	}
}

func TestAFailedAttemptOverTheLimitIsNotRetried(t *testing.T) {
	t.Parallel()
	h := spendingHarness(t, "1-1")
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		u := turn
		return StepResult{FinalState: FinalCrashed, Reason: "exit_code_1", Usage: &u}
	}
	o := h.options()
	o.Budget = &Budget{MaxTokens: 1}
	if _, err := h.run(context.Background(), o); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("run: %v", err)
	}
	if got := h.steps.requests(); len(got) != 1 || h.clock.slept() != nil {
		t.Errorf("attempts %v, backoffs %v: the limit is checked after the attempt, before any retry", got, h.clock.slept())
	}
}

func TestMaxDurationCountsTheRunsActiveTime(t *testing.T) {
	t.Parallel()
	h := spendingHarness(t, "1-1")
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		h.clock.advance(10 * time.Minute)
		return StepResult{FinalState: FinalCompleted}
	}
	o := h.options()
	o.Budget = &Budget{MaxDuration: DurationOf(25 * time.Minute)}
	res, err := h.run(context.Background(), o)
	if !errors.Is(err, ErrBudgetExceeded) || len(h.steps.requests()) != 3 {
		t.Fatalf("run: %v after %d attempts", err, len(h.steps.requests()))
	}
	if st := h.saved(res); st.ActiveMs < (30 * time.Minute).Milliseconds() {
		t.Errorf("active %dms", st.ActiveMs)
	}
}
