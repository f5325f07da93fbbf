package orchestrator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/workflows"
)

type fakePipeline struct {
	stepsAsIs
	choice workflows.PipelineChoice
	ready  error
	calls  int
}

func (p *fakePipeline) Choice() workflows.PipelineChoice { return p.choice }
func (p *fakePipeline) Ready(context.Context) error      { p.calls++; return p.ready }

// A pipeline that is not ready stops the run before anything is planned,
// written or started, a dry run too.
func TestRunRefusesWhenThePipelineIsNotReady(t *testing.T) {
	for _, dry := range []bool{false, true} {
		h := newHarness(t, "1-1")
		refusal := &Blocker{Code: "uv_missing", Action: "install uv", Err: errors.New("no uv")}
		d := h.deps()
		d.Pipeline = &fakePipeline{ready: refusal}
		o := h.options()
		o.DryRun = dry
		res, err := Run(context.Background(), o, d)
		if b, ok := AsBlocker(err); !ok || b != refusal || res != nil {
			t.Fatalf("dry %v: res %v, err %v", dry, res, err)
		}
		if reqs := h.steps.requests(); len(reqs) != 0 {
			t.Fatalf("dry %v: steps started: %v", dry, reqs)
		}
		if _, err := os.Stat(filepath.Join(h.root, StateDirName)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("dry %v: the run left %s (%v)", dry, StateDirName, err)
		}
		if _, err := h.store().Read(); err == nil {
			t.Fatalf("dry %v: a marker was written", dry)
		}
	}
}

// A ready pipeline's choice is the result's.
func TestRunReportsItsPipeline(t *testing.T) {
	h := newHarness(t, "1-1")
	pipe := &fakePipeline{choice: workflows.PipelineChoice{Pipeline: workflows.PipelineFiveStep, Why: "no _bmad/config.toml"}}
	d := h.deps()
	d.Pipeline = pipe
	o := h.options()
	o.DryRun = true
	res, err := Run(context.Background(), o, d)
	if err != nil || res.Pipeline.String() != pipe.choice.String() || pipe.calls != 1 {
		t.Fatalf("res %+v, err %v, ready called %d times", res, err, pipe.calls)
	}
	res, err = Run(context.Background(), h.options(), d)
	if err != nil || res.Pipeline.String() != pipe.choice.String() || res.Outcome != OutcomeDone {
		t.Fatalf("res %+v, err %v", res, err)
	}
}
