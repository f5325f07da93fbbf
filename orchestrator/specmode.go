package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/story-automator/story-automator/marker"
)

// ErrReplan marks a `run --resume --replan ID` that cannot be done.
var ErrReplan = errors.New("cannot replan the story")

// LandingCheckpoint is implemented by a Pipeline that may pause the run
// after a story lands (BMAD 6.12 stories mode's done_checkpoint): the
// story is done and committed, and run --resume goes on with the next.
type LandingCheckpoint interface {
	// AfterLanding returns the pause after story d landed (nil: none).
	AfterLanding(d StoryDispatch) *Blocker
}

// Replanner is implemented by a Pipeline that can send a story back to
// planning (run --resume --replan ID).
type Replanner interface {
	Replan(ctx context.Context, d StoryDispatch) error
}

// RetroTargeter is implemented by a Backlog whose retrospectives take
// another -H argument than the epic's id (a spec folder).
type RetroTargeter interface {
	RetroTarget(epic string) string
}

// RecordedConfig is the configuration of the run `run --resume` would
// continue in the project at root (ErrNothingToResume when there is none).
func RecordedConfig(root string, getenv func(string) string) (RunConfig, error) {
	l := &stateLoader{}
	path, err := findResumable(marker.NewStore(root, getenv), root, l)
	if err != nil {
		return RunConfig{}, err
	}
	st, err := l.load(path)
	if err != nil {
		return RunConfig{}, err
	}
	return st.Config, nil
}

// landingGate pauses the run after story u landed when the pipeline asks
// for it and stories are left to run; the story stays done, so run
// --resume goes on with the next. It reports whether the run goes on.
func (e *Engine) landingGate(u *Unit) bool {
	cp, ok := e.pipeline().(LandingCheckpoint)
	if !ok || u.Kind != KindStory {
		return true
	}
	e.mu.Lock()
	left := e.state.StoriesRemaining()
	e.mu.Unlock()
	if left == 0 {
		return true
	}
	b := cp.AfterLanding(e.storyDispatch(u, StepCommit, "", 0))
	st := u.Step(StepCommit)
	if b == nil || st == nil {
		return true
	}
	e.escalateBlocker(u, st, b)
	// Only the run pauses: the story landed, and stays done.
	e.updateUnit(u, func(*State) { st.Status, u.Status = StatusVerified, StatusDone })
	return false
}

// replan sends story id of a resumed run back to planning: the pipeline
// resets its spec, and its steps before the commit run again, each with a
// fresh budget.
func (e *Engine) replan(ctx context.Context, id string) error {
	var u *Unit
	for _, x := range e.state.Units {
		if x.Kind == KindStory && (x.Key == id || x.Dotted == id) {
			u = x
		}
	}
	r, ok := e.pipeline().(Replanner)
	switch {
	case !ok:
		return fmt.Errorf("%w: this run's pipeline (%s) plans no stories of its own", ErrReplan, e.pipeline().Choice().Pipeline)
	case u == nil:
		return fmt.Errorf("%w: the run has no story %q", ErrReplan, id)
	case u.Status == StatusDone:
		return fmt.Errorf("%w: story %s has landed (commit %s); revert it and start a new run instead", ErrReplan, u.Dotted, shortSHA(u.Commit))
	}
	if err := r.Replan(ctx, e.storyDispatch(u, StepDev, "", 0)); err != nil {
		return fmt.Errorf("%w: %v", ErrReplan, err)
	}
	now := e.Clock.Now()
	e.update(func(s *State) {
		u.Status = StatusPending
		for _, st := range u.Steps {
			if st.Name == StepCommit || st.Status == StatusSkipped {
				continue
			}
			st.Status, st.VerifyFirst, st.BudgetFrom = StatusPending, false, len(st.Attempts)
		}
		s.addLog(now, u.Dotted, StepDev, "replan asked (--replan): the spec is back to draft, the worker plans the story again")
	})
	return nil
}
