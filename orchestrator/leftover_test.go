package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// leftoverPipeline is a hookPipeline that also lays out leftovers.
type leftoverPipeline struct {
	*hookPipeline
	units []Leftover
	asked []Leftovers
}

func (p *leftoverPipeline) Leftovers(_ context.Context, q Leftovers) ([]Leftover, error) {
	p.asked = append(p.asked, q)
	return p.units, nil
}

// A run of leftovers plans the pipeline's units instead of the backlog's
// stories and takes each through the pipeline's hooks with its kind and
// items: no story is marked done, a unit whose items were all closed by
// hand meanwhile makes no commit, and the items closed are recorded.
func TestLeftoverUnitsRunThroughThePipeline(t *testing.T) {
	h := newHarness(t, "1-1")
	hp := &hookPipeline{steps: []string{StepDev, StepReview, StepCommit}}
	hp.dispatch = func(d StoryDispatch) (Dispatched, error) {
		switch {
		case d.Step == StepReview:
			return Dispatched{Skip: "no follow-up review"}, nil
		case d.Story.Key == "sweep-2":
			return Dispatched{Skip: "every item was closed by hand meanwhile", Skipped: []string{"dw-2"}}, nil
		}
		return Dispatched{Prompt: "/worker fix " + d.Work.Items[0].ID, Base: "b0", Skipped: []string{"dw-1b"}}, nil
	}
	hp.outcome = func(StoryDispatch, StepResult) StepOutcome {
		return StepOutcome{FinalState: FinalCompleted, Spec: "spec-fix.md"}
	}
	hp.land = func(d StoryDispatch, req *CommitRequest) error {
		req.Subject = "sweep: " + d.Work.Source
		return nil
	}
	p := &leftoverPipeline{hookPipeline: hp, units: []Leftover{
		{Key: "sweep-1", Kind: KindSweep, Dotted: "sweep 1", Title: "deferred findings of a.md",
			Work: Work{Source: "a.md", Items: []WorkItem{{ID: "dw-1", Summary: "one"}, {ID: "dw-1b", Summary: "two"}}}},
		{Key: "sweep-2", Kind: KindSweep, Dotted: "sweep 2", Work: Work{Source: "b.md", Items: []WorkItem{{ID: "dw-2", Summary: "three"}}}},
	}}
	o := h.options()
	o.Leftovers = &Leftovers{Sweep: true, MinSeverity: "medium"}
	d := h.deps()
	d.Pipeline = p
	res, err := Run(context.Background(), o, d)
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("run: %v %+v", err, res)
	}
	if len(p.asked) != 1 || p.asked[0].MinSeverity != "medium" || len(res.State.Units) != 2 || res.State.Unit("1-1") != nil {
		t.Fatalf("asked %+v, units %+v", p.asked, res.State.Units)
	}
	u1, u2 := res.State.Unit("sweep-1"), res.State.Unit("sweep-2")
	if u1.Kind != KindSweep || u1.Status != StatusDone || u1.Commit == "" || u1.Spec != "spec-fix.md" ||
		strings.Join(u1.Work.Skipped, ",") != "dw-1b" {
		t.Fatalf("sweep-1 %+v", u1)
	}
	if u2.Status != StatusDone || u2.Commit != "" || u2.Step(StepCommit).Status != StatusSkipped || strings.Join(u2.Work.Skipped, ",") != "dw-2" {
		t.Fatalf("sweep-2 %+v, commit step %+v", u2, u2.Step(StepCommit))
	}
	if c := h.repo.commits; len(c) != 1 || c[0].Subject != "sweep: a.md" {
		t.Fatalf("commits %+v", c)
	}
	if len(hp.dispatched) == 0 || hp.dispatched[0].Kind != KindSweep || hp.dispatched[0].Work == nil {
		t.Fatalf("dispatched %+v", hp.dispatched)
	}
	if info, _ := h.project.Story("1-1"); info.Status == StatusDone {
		t.Fatal("a run of leftovers marked a story done")
	}
	reqs := h.storyRequests()
	if len(reqs) != 1 || reqs[0].Prompt != "/worker fix dw-1" || reqs[0].Story != "sweep-1" {
		t.Fatalf("requests %+v", reqs)
	}
}

// A pipeline whose worker takes no free text refuses a run of leftovers
// before anything starts.
func TestLeftoversNeedAPipelineThatPlansThem(t *testing.T) {
	h := newHarness(t, "1-1")
	o := h.options()
	o.Leftovers = &Leftovers{ActionItems: true}
	res, err := h.run(context.Background(), o)
	var b *Blocker
	if !errors.As(err, &b) || b.Code != CodeLeftoversUnsupported || len(h.steps.requests()) != 0 {
		t.Fatalf("run: %v %+v", err, res)
	}
}

// Nothing open: the run of leftovers plans no unit, starts nothing and
// ends done, saying so in its log.
func TestLeftoversWithNothingOpenEndDone(t *testing.T) {
	h := newHarness(t, "1-1")
	p := &leftoverPipeline{hookPipeline: &hookPipeline{steps: []string{StepDev, StepCommit}}}
	o := h.options()
	o.Leftovers = &Leftovers{Sweep: true}
	d := h.deps()
	d.Pipeline = p
	res, err := Run(context.Background(), o, d)
	if err != nil || res.Outcome != OutcomeDone || len(res.State.Units) != 0 || len(h.steps.requests()) != 0 || len(h.repo.commits) != 0 {
		t.Fatalf("run: %v %+v", err, res)
	}
	if !strings.Contains(res.State.Log[0].Message, "0 units, 0 items") {
		t.Fatalf("log %+v", res.State.Log)
	}
}
