package orchestrator

import (
	"context"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/workflows"
)

// stepsAsIs is the pipeline of an Engine given none: the five steps, each
// with its own prompt and verifier, no hook doing anything.
type stepsAsIs struct{}

var _ Pipeline = stepsAsIs{}

func (stepsAsIs) Choice() workflows.PipelineChoice { return workflows.PipelineChoice{} }
func (stepsAsIs) Ready(context.Context) error      { return nil }
func (stepsAsIs) StorySteps() []string             { return StorySteps() }
func (stepsAsIs) Dispatch(context.Context, StoryDispatch) (Dispatched, error) {
	return Dispatched{}, nil
}
func (stepsAsIs) Outcome(context.Context, StoryDispatch, StepResult) StepOutcome {
	return StepOutcome{}
}
func (stepsAsIs) Land(context.Context, StoryDispatch, *CommitRequest) error { return nil }

// pipeline is the run's pipeline.
func (e *Engine) pipeline() Pipeline {
	if e.Pipeline == nil {
		return stepsAsIs{}
	}
	return e.Pipeline
}

// storyDispatch is a story unit's step as the pipeline's hooks see it.
func (e *Engine) storyDispatch(u *Unit, step, agentName string, cycle int) StoryDispatch {
	e.mu.Lock()
	defer e.mu.Unlock()
	info := StoryInfo{Key: u.Key, Dotted: u.Dotted, Epic: u.Epic, Title: u.Title}
	var work *Work
	if u.Work != nil {
		w := *u.Work
		work = &w
	}
	return StoryDispatch{RunID: e.state.RunID, Story: info, Step: step, Agent: agentName, Cycle: cycle, Kind: u.Kind, Work: work,
		WorkDir: u.Worktree, Spec: u.Spec, Base: u.Base, Before: slices.Clone(u.SpecsBefore), Host: u.Host,
		SharedTree:     u.Worktree == "" && e.state.Config.Parallel > 1,
		PlanCheckpoint: e.state.Config.PlanCheckpoint, Halt: u.Halt}
}

// dispatch asks the pipeline to prepare a story's attempt, with the commit
// lock held (its bookkeeping commit must not meet another story's). It
// returns the prompt the attempt sends ("" = the step's own), or ends the
// step: skipped (stepOK, done) or escalated.
func (e *Engine) dispatch(ctx context.Context, u *Unit, st *StepState, mv move) (string, stepEnd, bool) {
	if !u.pipelined() {
		return "", stepOK, false
	}
	d := e.storyDispatch(u, st.Name, mv.Agent, mv.Cycle)
	e.commitMu.Lock()
	got, err := e.pipeline().Dispatch(ctx, d)
	if err != nil || got.Prompt != "" || got.Skip != "" {
		// The pipeline may have written the tree (its bookkeeping): the
		// next attempt lists it afresh. One that sends the step's own
		// prompt wrote nothing.
		e.treeWritten()
	}
	e.commitMu.Unlock()
	if err != nil {
		b, ok := AsBlocker(err)
		if !ok {
			b = &Blocker{Code: "dispatch_failed", Err: err, Action: escalationAction(u, st)}
		}
		e.escalateBlocker(u, st, b)
		return "", stepEscalated, true
	}
	now := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		if got.Base != "" && u.Base == "" {
			u.Base = got.Base
		}
		if got.Before != nil && u.SpecsBefore == nil {
			u.SpecsBefore = got.Before
		}
		if got.Note != "" {
			s.addLog(now, u.Dotted, st.Name, got.Note)
		}
		if got.Prompt != "" {
			u.Halt = got.Halt
		}
		if u.Work != nil && len(got.Skipped) > 0 {
			u.Work.Skipped = mergeIDs(u.Work.Skipped, got.Skipped)
			s.addLog(now, u.Dotted, st.Name, "closed by hand meanwhile, left out: "+strings.Join(got.Skipped, ", "))
		}
	})
	if got.Skip != "" {
		e.skip(u, st, got.Skip)
		return "", stepOK, true
	}
	return got.Prompt, stepOK, false
}

// outcome reads an attempt of a pipeline-sent prompt through the
// pipeline, records the spec it found, and returns its reading.
func (e *Engine) outcome(ctx context.Context, u *Unit, st *StepState, agentName string, cycle int, res StepResult) StepOutcome {
	d := e.storyDispatch(u, st.Name, agentName, cycle)
	out := e.pipeline().Outcome(ctx, d, res)
	now := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		if out.Spec != "" && u.Spec != out.Spec {
			u.Spec = out.Spec
			s.addLog(now, u.Dotted, st.Name, "spec "+out.Spec+": every later dispatch resumes it by this path")
		}
		if out.Retry != "" {
			s.addLog(now, u.Dotted, st.Name, "settled by the run: "+out.Retry)
		}
	})
	return out
}

// pauseAt pauses the run at a checkpoint of a step: recorded as the
// step's escalation with the checkpoint's code and action, so that run
// --resume takes the step up again (checked first, as any escalated step).
func (e *Engine) pauseAt(u *Unit, st *StepState, b *Blocker) stepEnd {
	e.escalateBlocker(u, st, b)
	return stepEscalated
}

// resumeOutcome asks the pipeline to read an escalated story step from the
// files as a resumed run finds them; read is false when the pipeline leaves
// it to the step's verifier (the five steps). A step the files say is done
// counts only once its command verifiers (the test command among them)
// pass, run confined as after an attempt.
func (e *Engine) resumeOutcome(ctx context.Context, u *Unit, st *StepState) (StepOutcome, bool) {
	if !u.pipelined() {
		return StepOutcome{}, false
	}
	out := e.outcome(ctx, u, st, "", 0, StepResult{FinalState: FinalCompleted, Reason: resumeChecked})
	if out.FinalState == FinalCompleted {
		if res := e.resumeCommands(ctx, u, st); res.FinalState != FinalCompleted {
			out.FinalState, out.Reason = res.FinalState, res.Reason
		}
	}
	if out.Pause != nil || out.Blocker != nil {
		out.FinalState = FinalIncomplete
	}
	return out, out.FinalState != ""
}

// beforeLanding lets the pipeline prepare a story's commit, the commit lock
// held.
func (e *Engine) beforeLanding(ctx context.Context, u *Unit, req *CommitRequest) error {
	d := e.storyDispatch(u, StepCommit, "", 0)
	d.Story = req.Story
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	e.treeWritten()
	defer e.treeWritten()
	return e.pipeline().Land(context.WithoutCancel(ctx), d, req)
}

// resumeChecked is the reason of the step result a resumed run's re-check
// gives the pipeline.
const resumeChecked = "checked on resume"

// resumeCommands runs the command verifiers of a story step the pipeline
// read from the files as done, as a resumed run re-checks it: completed
// only when they passed.
func (e *Engine) resumeCommands(ctx context.Context, u *Unit, st *StepState) StepResult {
	req := StepRequest{RunID: e.state.RunID, Story: u.Key, Epic: u.Epic, Step: st.Name, WorkDir: u.Worktree,
		Host: u.Host, FromFiles: true}
	v, err := e.Steps.StepVerifier(req)
	if err != nil {
		return StepResult{FinalState: FinalIncomplete, Reason: resumeChecked + ": the step's command verifiers: " + err.Error()}
	}
	verdict := v.Verify(ctx)
	if !verdict.Passed() {
		return StepResult{FinalState: FinalIncomplete, Reason: resumeChecked + ": " + v.Name() + " not verified: " + verdict.Detail}
	}
	return StepResult{FinalState: FinalCompleted, Reason: resumeChecked}
}
