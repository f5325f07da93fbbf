package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// checkpointPipeline adds a pause after landing and a replan to hookPipeline.
type checkpointPipeline struct {
	*hookPipeline
	after    func(d StoryDispatch) *Blocker
	replans  []StoryDispatch
	replanOK error
}

func (p *checkpointPipeline) AfterLanding(d StoryDispatch) *Blocker { return p.after(d) }

func (p *checkpointPipeline) Replan(_ context.Context, d StoryDispatch) error {
	p.replans = append(p.replans, d)
	return p.replanOK
}

// A checkpoint after landing pauses the run with its code once the story
// is committed and done; run --resume goes on with the next story, and
// no pause follows the last story.
func TestLandingCheckpointPausesAfterTheStoryLands(t *testing.T) {
	h := newHarness(t, "1-1", "1-2")
	p := &checkpointPipeline{hookPipeline: &hookPipeline{steps: []string{StepDev, StepCommit}}}
	var asked []string
	p.after = func(d StoryDispatch) *Blocker {
		asked = append(asked, d.Story.Key)
		return &Blocker{Code: "done_review", Err: errors.New("story " + d.Story.Key + " landed"), Action: "review it"}
	}
	res, err := h.runWith(p, false)
	if !errors.Is(err, ErrEscalated) || res.State.Escalation == nil || res.State.Escalation.Code != "done_review" ||
		res.State.Escalation.Action != "review it" {
		t.Fatalf("err %v, escalation %+v", err, res.State.Escalation)
	}
	u1, u2 := res.State.Unit("1-1"), res.State.Unit("1-2")
	if u1.Status != StatusDone || u1.Commit == "" || u1.Step(StepCommit).Status != StatusVerified || u2.Status != StatusPending {
		t.Fatalf("units %+v %+v", u1, u2)
	}
	// A story that landed cannot be replanned.
	o := h.options()
	o.Resume, o.Replan = true, "1-1"
	d := h.deps()
	d.Pipeline = p
	if _, err := Run(context.Background(), o, d); !errors.Is(err, ErrReplan) || !strings.Contains(err.Error(), "has landed") || len(p.replans) != 0 {
		t.Fatalf("landed: %v", err)
	}
	commits := len(h.repo.commits)
	res, err = h.runWith(p, true)
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if strings.Join(asked, ",") != "1-1" {
		t.Fatalf("asked after %v (none after the last story)", asked)
	}
	if n := len(h.repo.commits); n != commits+2 { // story 1-2 and the retrospective; 1-1 not again
		t.Fatalf("commits %+v", h.repo.commits)
	}
	if r := h.storyRequests(); len(r) != 2 || r[1].Story != "1-2" {
		t.Fatalf("requests %+v", r)
	}
}

// run --resume --replan ID asks the pipeline to send the story back to
// planning and runs its steps again, fresh, without reading it first.
func TestReplanResetsTheStory(t *testing.T) {
	h := newHarness(t, "1-1")
	p := &checkpointPipeline{hookPipeline: &hookPipeline{steps: []string{StepDev, StepCommit}}, after: func(StoryDispatch) *Blocker { return nil }}
	p.dispatch = func(d StoryDispatch) (Dispatched, error) { return Dispatched{Prompt: "/worker", Halt: true}, nil }
	paused := true
	p.outcome = func(d StoryDispatch, res StepResult) StepOutcome {
		if res.Reason == "checked on resume" {
			t.Error("the replanned story was read before its dispatch")
		}
		if paused {
			return StepOutcome{FinalState: FinalIncomplete, Spec: "s/1-1-x.md", Pause: &Blocker{Code: "plan_review", Err: errors.New("planned"), Action: "review"}}
		}
		return StepOutcome{FinalState: FinalCompleted}
	}
	if _, err := h.runWith(p, false); !errors.Is(err, ErrEscalated) {
		t.Fatal(err)
	}
	o := h.options()
	o.Resume, o.Replan = true, "9-9"
	d := h.deps()
	d.Pipeline = p
	if _, err := Run(context.Background(), o, d); !errors.Is(err, ErrReplan) || Code(err) != "replan_invalid" || !strings.Contains(err.Error(), "9-9") {
		t.Fatalf("unknown story: %v", err)
	}
	paused = false
	o.Replan = "1.1"
	res, err := Run(context.Background(), o, d)
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("replan: %v %+v", err, res)
	}
	if len(p.replans) != 1 || p.replans[0].Story.Key != "1-1" || p.replans[0].Spec != "s/1-1-x.md" {
		t.Fatalf("replans %+v", p.replans)
	}
	if n := len(h.storyRequests()); n != 2 {
		t.Fatalf("attempts %v", h.steps.requests())
	}
}

// A pipeline that plans nothing of its own cannot replan.
func TestReplanNeedsAReplanner(t *testing.T) {
	h := newHarness(t, "1-1")
	h.runUntilEscalatedByCrashes()
	o := h.options()
	o.Resume, o.Replan = true, "1-1"
	if _, err := h.run(context.Background(), o); !errors.Is(err, ErrReplan) {
		t.Fatalf("err %v", err)
	}
}

// targetBacklog gives its retrospectives a target of their own.
type targetBacklog struct{ *fakeBacklog }

func (targetBacklog) RetroTarget(epic string) string { return "specs/" + epic }

// A backlog's retrospective target reaches the retrospective's unit.
func TestPlanTakesTheBacklogsRetroTarget(t *testing.T) {
	b := newFakeBacklog("1-1")
	st, err := NewPlan(targetBacklog{b}, PlanInput{RunID: "r", Config: RunConfig{Stories: "all"}, Policy: DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	r := st.Unit("epic-1-retro")
	if r == nil || r.Target != "specs/1" || retroTarget(r) != "specs/1" {
		t.Fatalf("retro %+v", r)
	}
}
