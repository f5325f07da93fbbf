package orchestrator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// hookPipeline is a Pipeline whose hooks are scripted by the test and
// record what they were given.
type hookPipeline struct {
	stepsAsIs
	steps    []string
	dispatch func(d StoryDispatch) (Dispatched, error)
	outcome  func(d StoryDispatch, res StepResult) StepOutcome
	land     func(d StoryDispatch, req *CommitRequest) error

	mu         sync.Mutex
	dispatched []StoryDispatch
	read       []StoryDispatch
	landed     []StoryDispatch
}

func (p *hookPipeline) StorySteps() []string { return p.steps }

func (p *hookPipeline) Dispatch(_ context.Context, d StoryDispatch) (Dispatched, error) {
	p.mu.Lock()
	p.dispatched = append(p.dispatched, d)
	p.mu.Unlock()
	if p.dispatch == nil {
		return Dispatched{}, nil
	}
	return p.dispatch(d)
}

func (p *hookPipeline) Outcome(_ context.Context, d StoryDispatch, res StepResult) StepOutcome {
	p.mu.Lock()
	p.read = append(p.read, d)
	p.mu.Unlock()
	if p.outcome == nil {
		return StepOutcome{}
	}
	return p.outcome(d, res)
}

func (p *hookPipeline) Land(_ context.Context, d StoryDispatch, req *CommitRequest) error {
	p.mu.Lock()
	p.landed = append(p.landed, d)
	p.mu.Unlock()
	if p.land == nil {
		return nil
	}
	return p.land(d, req)
}

func (h *harness) runWith(p Pipeline, resume bool) (*Result, error) {
	h.t.Helper()
	d := h.deps()
	d.Pipeline = p
	o := h.options()
	o.Resume = resume
	return Run(context.Background(), o, d)
}

// The pipeline says a story's steps; its prompt reaches the runner; its
// reading of the files overrides the monitor's; the spec it found and the
// base it recorded reach its later hooks; it prepares the commit.
func TestPipelineHooksDriveAStory(t *testing.T) {
	h := newHarness(t, "1-1")
	reads := 0
	p := &hookPipeline{steps: []string{StepDev, StepReview, StepCommit}}
	p.dispatch = func(d StoryDispatch) (Dispatched, error) {
		if d.Step == StepReview {
			return Dispatched{Skip: "no follow-up review recommended"}, nil
		}
		return Dispatched{Prompt: "/worker " + d.Story.Key + " " + d.Spec, Base: "base0", Before: []string{"old.md"}}, nil
	}
	p.outcome = func(d StoryDispatch, res StepResult) StepOutcome {
		reads++
		if reads == 1 {
			// The monitor saw the session complete; the files say it died.
			return StepOutcome{FinalState: FinalIncomplete, Reason: "died mid-flight", Spec: "spec-1-1.md"}
		}
		return StepOutcome{FinalState: FinalCompleted, Reason: "spec done"}
	}
	p.land = func(d StoryDispatch, req *CommitRequest) error {
		req.Subject = "1-1-key: landed"
		return nil
	}
	res, err := h.runWith(p, false)
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("run: %v %+v", err, res)
	}
	u := res.State.Unit("1-1")
	var names []string
	for _, st := range u.Steps {
		names = append(names, st.Name+"="+st.Status)
	}
	if got := strings.Join(names, " "); got != "dev=verified review=skipped commit=verified" {
		t.Fatalf("steps %s", got)
	}
	if u.Spec != "spec-1-1.md" || u.Base != "base0" || len(u.SpecsBefore) != 1 {
		t.Fatalf("unit %+v", u)
	}
	reqs := h.storyRequests()
	if len(reqs) != 2 || reqs[0].Prompt != "/worker 1-1 " || reqs[1].Prompt != "/worker 1-1 spec-1-1.md" {
		t.Fatalf("requests %+v", reqs)
	}
	if len(p.dispatched) != 3 || p.dispatched[1].Spec != "spec-1-1.md" || p.dispatched[1].Base != "base0" {
		t.Fatalf("dispatched %+v", p.dispatched)
	}
	if u.Steps[0].Attempts[0].FinalState != FinalIncomplete || u.Steps[0].Attempts[0].Reason != "died mid-flight" {
		t.Fatalf("first attempt %+v", u.Steps[0].Attempts[0])
	}
	if len(p.landed) != 1 || p.landed[0].Spec != "spec-1-1.md" || p.landed[0].Story.Key != "1-1" {
		t.Fatalf("landed %+v", p.landed)
	}
	if c := h.repo.commits; len(c) != 2 || c[0].Subject != "1-1-key: landed" || c[1].Subject != "" {
		t.Fatalf("commits %+v", c)
	}
}

// Without a pipeline the engine sends each step's own prompt and reads
// the monitor's verdict: the five steps as before.
func TestNoPipelineLeavesTheStepsTheirOwnPrompt(t *testing.T) {
	h := newHarness(t, "1-1")
	h.runOK()
	for _, r := range h.steps.reqs {
		if r.Prompt != "" {
			t.Fatalf("request %+v carries a prompt", r)
		}
	}
	if len(h.storyRequests()) != 4 {
		t.Fatalf("requests %v", h.steps.requests())
	}
}

// A blocker read from the files escalates at once with its code and
// action; a failing dispatch escalates before any attempt.
func TestPipelineBlockerEscalatesAtOnce(t *testing.T) {
	h := newHarness(t, "1-1")
	p := &hookPipeline{steps: []string{StepDev, StepCommit},
		dispatch: func(StoryDispatch) (Dispatched, error) { return Dispatched{Prompt: "/worker"}, nil },
		outcome: func(StoryDispatch, StepResult) StepOutcome {
			return StepOutcome{Blocker: &Blocker{Code: "build_auto_blocked", Err: errors.New(`blocked: "no subagents"`), Action: "use another agent"}}
		}}
	res, err := h.runWith(p, false)
	if !errors.Is(err, ErrEscalated) || res.State.Escalation == nil || res.State.Escalation.Code != "build_auto_blocked" ||
		!strings.Contains(res.State.Escalation.Reason, "no subagents") || res.State.Escalation.Action != "use another agent" {
		t.Fatalf("err %v, escalation %+v", err, res.State.Escalation)
	}
	if len(h.storyRequests()) != 1 {
		t.Fatalf("attempts %v", h.steps.requests())
	}

	h2 := newHarness(t, "1-1")
	p2 := &hookPipeline{steps: []string{StepDev, StepCommit},
		dispatch: func(StoryDispatch) (Dispatched, error) { return Dispatched{}, errors.New("board unsafe") }}
	res, err = h2.runWith(p2, false)
	if !errors.Is(err, ErrEscalated) || !strings.Contains(res.State.Escalation.Reason, "board unsafe") || len(h2.steps.reqs) != 0 {
		t.Fatalf("err %v, escalation %+v, attempts %v", err, res.State.Escalation, h2.steps.requests())
	}
}

// A checkpoint pauses the run after the attempt; run --resume asks the
// pipeline (not the step's verifier) whether the step is done, then
// dispatches again.
func TestPipelinePauseThenResume(t *testing.T) {
	h := newHarness(t, "1-1")
	halted := false
	p := &hookPipeline{steps: []string{StepDev, StepCommit}}
	p.dispatch = func(d StoryDispatch) (Dispatched, error) {
		return Dispatched{Prompt: "/worker", Halt: d.Spec == ""}, nil
	}
	p.outcome = func(d StoryDispatch, res StepResult) StepOutcome {
		if d.Halt {
			halted = true
			return StepOutcome{FinalState: FinalIncomplete, Spec: "spec.md", Pause: &Blocker{Code: "plan_review", Err: errors.New("planned: spec.md"), Action: "review spec.md"}}
		}
		if res.Reason == "checked on resume" {
			return StepOutcome{FinalState: FinalIncomplete, Reason: "ready-for-dev"}
		}
		return StepOutcome{FinalState: FinalCompleted}
	}
	res, err := h.runWith(p, false)
	if !errors.Is(err, ErrEscalated) || !halted || res.State.Escalation.Code != "plan_review" || res.State.Unit("1-1").Spec != "spec.md" {
		t.Fatalf("err %v, state %+v", err, res.State.Escalation)
	}
	res, err = h.runWith(p, true)
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if n := len(h.storyRequests()); n != 2 {
		t.Fatalf("attempts %v", h.steps.requests())
	}
	last := p.read[len(p.read)-1]
	if last.Halt || last.Spec != "spec.md" {
		t.Fatalf("the resumed dispatch %+v", last)
	}
}

// A step escalated, then finished by hand: run --resume counts the done
// the files say only once the step's command verifiers (the test command
// a person's edit may have broken) pass, asked for alone (FromFiles);
// until then the step takes another attempt.
func TestPipelineResumeRunsTheCommandVerifiers(t *testing.T) {
	for _, pass := range []bool{false, true} {
		h := newHarness(t, "1-1")
		byHand := false
		p := &hookPipeline{steps: []string{StepDev, StepCommit}}
		p.dispatch = func(StoryDispatch) (Dispatched, error) { return Dispatched{Prompt: "/worker"}, nil }
		p.outcome = func(StoryDispatch, StepResult) StepOutcome {
			if !byHand {
				return StepOutcome{Blocker: &Blocker{Code: "build_auto_blocked", Err: errors.New(`blocked: "intent gap"`), Action: "fix the spec"}}
			}
			return StepOutcome{FinalState: FinalCompleted, Reason: "spec done"}
		}
		if _, err := h.runWith(p, false); !errors.Is(err, ErrEscalated) {
			t.Fatalf("first run: %v", err)
		}
		byHand = true
		var asked []StepRequest
		h.steps.verify = func(req StepRequest) bool {
			asked = append(asked, req)
			return pass
		}
		res, err := h.runWith(p, true)
		if err != nil || res.Outcome != OutcomeDone {
			t.Fatalf("pass=%v: resume: %v %+v", pass, err, res)
		}
		if len(asked) != 1 || !asked[0].FromFiles || asked[0].Step != StepDev || asked[0].Story != "1-1" {
			t.Fatalf("pass=%v: the verifiers asked for %+v, want the dev step's command verifiers once", pass, asked)
		}
		want, attempts := "checked on resume before any agent: verified, finished by hand", 1
		if !pass {
			want, attempts = "checked on resume before any agent: not verified (checked on resume: fake not verified: not done)", 2
		}
		if n := len(h.storyRequests()); n != attempts {
			t.Fatalf("pass=%v: %d attempts, want %d: %v", pass, n, attempts, h.steps.requests())
		}
		found := false
		for _, l := range res.State.Log {
			found = found || (l.Step == StepDev && l.Message == want)
		}
		if !found {
			t.Fatalf("pass=%v: no log line %q: %+v", pass, want, res.State.Log)
		}
	}
}

// storyRequests are the requests of story steps (the retrospective's left out).
func (h *harness) storyRequests() []StepRequest {
	h.steps.mu.Lock()
	defer h.steps.mu.Unlock()
	var out []StepRequest
	for _, r := range h.steps.reqs {
		if r.Step != StepRetro {
			out = append(out, r)
		}
	}
	return out
}

// The hooks are told where the story runs: side by side with others in
// the one working tree (--parallel without worktrees) or alone.
func TestPipelineHooksKnowWhetherTheTreeIsShared(t *testing.T) {
	for _, parallel := range []int{1, 2} {
		h := newHarness(t, "1-1")
		p := &hookPipeline{steps: []string{StepDev, StepCommit}}
		d := h.deps()
		d.Pipeline = p
		o := h.options()
		o.Parallel, o.Isolate = parallel, IsolateNone
		if _, err := Run(context.Background(), o, d); err != nil {
			t.Fatal(err)
		}
		if len(p.dispatched) == 0 || p.dispatched[0].SharedTree != (parallel > 1) || p.dispatched[0].Host != LocalHost {
			t.Fatalf("parallel %d: dispatched %+v", parallel, p.dispatched)
		}
	}
}
