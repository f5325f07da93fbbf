package orchestrator

import (
	"errors"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/workflows"
)

// Errors with stable codes (see Code).
var (
	ErrRunActive       = errors.New("another run is active in this project")
	ErrRunPaused       = errors.New("a paused or interrupted run exists in this project")
	ErrNothingToResume = errors.New("no run to resume")
	ErrDependency      = errors.New("a story depends on a story that is neither done nor selected")
	ErrDependencyCycle = errors.New("the stories' dependencies form a cycle")
	ErrNotGitRepo      = errors.New("the project is not a git repository")
	ErrDirtyWorktree   = errors.New("the project has uncommitted changes")
	ErrEscalated       = errors.New("the run escalated and is paused")
	ErrInterrupted     = errors.New("the run was interrupted and is paused")
	ErrPausedByHand    = errors.New("the marker was paused by hand")
	ErrConfig          = errors.New("invalid run configuration")
	ErrGitIndexLocked  = errors.New("the git index is locked")
	ErrBudgetExceeded  = errors.New("the run reached a budget and is paused")
	ErrNoSuchRun       = errors.New("no such run")
	ErrDoneWithParked  = errors.New("the run did every story it could; parked stories are left")
)

// Blocker is a failure no retry can change (a locked index, a missing git
// identity, a rejected hook, a story the epics do not declare): a run stops
// or escalates on the first one, with its own code and the one action that
// settles it.
type Blocker struct {
	Code   string
	Action string
	Err    error
	// Park: the cause concerns this story alone and needs a person; a run
	// that parks (OnEscalationPark) parks the story and goes on.
	Park bool
}

func (b *Blocker) Error() string { return b.Err.Error() }
func (b *Blocker) Unwrap() error { return b.Err }

// AsBlocker returns the Blocker in err's chain, if any.
func AsBlocker(err error) (*Blocker, bool) {
	var b *Blocker
	ok := errors.As(err, &b)
	return b, ok
}

// Code maps an error of a run to the snake_case code users see.
func Code(err error) string {
	codes := []struct {
		err  error
		code string
	}{
		{ErrRunActive, "run_active"},
		{ErrRunPaused, "run_paused"},
		{ErrNothingToResume, "no_run_to_resume"},
		{ErrReplan, "replan_invalid"},
		{ErrDependency, "dependency_not_selected"},
		{ErrDependencyCycle, "dependency_cycle"},
		{ErrNotGitRepo, "not_a_git_repo"},
		{ErrDirtyWorktree, "worktree_dirty"},
		{ErrEscalated, "run_escalated"},
		{ErrDoneWithParked, string(OutcomeDoneWithParked)},
		{ErrBudgetExceeded, CodeBudgetExceeded},
		{ErrNoSuchRun, "run_not_found"},
		{ErrInterrupted, "run_interrupted"},
		{ErrPausedByHand, "run_paused_by_hand"},
		{ErrConfig, "invalid_run_config"},
		{ErrStateCorrupt, "state_corrupt"},
	}
	if b, ok := AsBlocker(err); ok {
		return b.Code
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	if c := marker.Code(err); c != "" && c != "marker_io" && c != "internal_error" {
		return c
	}
	return "run_failed"
}

// Coded turns a run's error into the coded error its user sees: a
// *coded.Error as it is (Wire's), else one with the blocker's
// code (its action in the "action" field), the workflow's or the run's code.
func Coded(err error) *coded.Error {
	var c *coded.Error
	if errors.As(err, &c) {
		return c
	}
	if b, ok := AsBlocker(err); ok {
		c := coded.Fail(b.Code, "%v", err)
		c.Fields = map[string]any{"action": b.Action}
		return c
	}
	if code := workflows.Code(err); code != "workflow_io" {
		return coded.Fail(code, "%v", err)
	}
	return coded.Fail(Code(err), "%v", err)
}
