// Package resolve brings a story a run could not finish (escalated or
// parked) back into the run: a session with an agent that a person talks
// to, seeded with everything about why the story stopped, then the story
// re-armed — its spec set back to a status the worker resumes from, its
// unit and step pending in the run's state — for `run --resume`.
package resolve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/workflows"
)

// Codes of the refusals and failures of resolve.
const (
	CodeNoRun        = "resolve_no_run"
	CodeUnknownStory = "resolve_unknown_story"
	CodeNotBlocked   = "resolve_not_blocked"
	CodeRunActive    = "resolve_run_active"
	CodeNoPatch      = "resolve_no_patch"
	CodePatchFailed  = "resolve_patch_failed"
	CodeUnparkFailed = "resolve_unpark_failed"
	CodeSessionEnded = "resolve_session_not_finished"
	CodeNoSpec       = "resolve_no_spec"
)

// Target is a story a person resolves: its unit in the run's newest state
// document, the step that stopped it and why.
type Target struct {
	Root string
	// Dir is where the story's work is: its worktree, else Root.
	Dir       string
	StatePath string
	State     *orchestrator.State
	Unit      *orchestrator.Unit
	Step      *orchestrator.StepState
	// Why is the escalation: the run's own when it names the unit, else
	// what the step's note says.
	Why orchestrator.Escalation
	// Spec is the story's spec (absolute; "" when the worker wrote none).
	Spec string
}

// Blocked reports whether a unit is one resolve takes: escalated or parked.
func Blocked(u *orchestrator.Unit) bool {
	return u.Status == orchestrator.StatusEscalated || u.Status == orchestrator.StatusParked
}

// Find reads the project's newest run and finds the story id names: its
// key (1-2), its number (1.2) or its board key (1-2-account-settings), as
// `status` shows it. The story must be escalated or parked.
func Find(root string, getenv func(string) string, id string) (*Target, error) {
	path := orchestrator.LatestState(marker.NewStore(root, getenv), root)
	if path == "" {
		return nil, coded.Fail(CodeNoRun, "the project %s has no run", root).
			WithAction("a story is resolved after a run escalated or parked it: start one with `story-automator run`")
	}
	st, err := orchestrator.LoadState(path)
	if err != nil {
		return nil, err
	}
	u := unitOf(st, id)
	if u == nil {
		return nil, coded.Fail(CodeUnknownStory, "run %s has no story %q", st.RunID, id).
			WithAction("name one of its stories as `status` shows it; to resolve: %s", listBlocked(st))
	}
	if !Blocked(u) {
		return nil, coded.Fail(CodeNotBlocked, "story %s is %s, neither escalated nor parked: there is nothing to resolve", u.Dotted, u.Status).
			WithAction("stories to resolve: %s", listBlocked(st))
	}
	t := &Target{Root: root, Dir: root, StatePath: path, State: st, Unit: u}
	if u.Worktree != "" {
		t.Dir = u.Worktree
	}
	for _, s := range u.Steps {
		if s.Status == orchestrator.StatusEscalated || s.Status == orchestrator.StatusParked {
			t.Step = s
			break
		}
	}
	if t.Step == nil {
		t.Step = u.CurrentStep()
	}
	if t.Step == nil {
		return nil, coded.Fail(CodeNotBlocked, "story %s is %s but has no step left to run", u.Dotted, u.Status)
	}
	if e := st.Escalation; e != nil && e.Unit == u.Dotted {
		t.Why = *e
	} else {
		t.Why = orchestrator.Escalation{Unit: u.Dotted, Step: t.Step.Name, Reason: t.Step.Note}
	}
	if u.Spec != "" {
		t.Spec = filepath.Join(t.Dir, filepath.FromSlash(u.Spec))
	}
	return t, nil
}

// unitOf is the story unit id names, or nil.
func unitOf(st *orchestrator.State, id string) *orchestrator.Unit {
	id = strings.TrimSpace(id)
	var byKey *orchestrator.Unit
	for _, u := range st.Units {
		if u.Kind != orchestrator.KindStory {
			continue
		}
		if u.Key == id || u.Dotted == id {
			return u
		}
		if k, err := workflows.ParseStoryKey(id); err == nil && k.String() == u.Key {
			byKey = u
		}
	}
	return byKey
}

// listBlocked names the run's stories that are escalated or parked.
func listBlocked(st *orchestrator.State) string {
	var out []string
	for _, u := range st.Units {
		if u.Kind == orchestrator.KindStory && Blocked(u) {
			out = append(out, u.Dotted+" ("+u.Status+")")
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// spec reads the story's spec; ok is false when it has none.
func (t *Target) spec() (workflows.Spec, bool, error) {
	if t.Spec == "" {
		return workflows.Spec{}, false, nil
	}
	s, err := workflows.ReadSpec(t.Spec)
	if errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	return s, true, nil
}

// rel is a path relative to the story's folder when it is under it.
func (t *Target) rel(path string) string {
	if r, err := filepath.Rel(t.Dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

// describe is the story as a person reads it.
func (t *Target) describe() string {
	s := "story " + t.Unit.Dotted
	if t.Unit.Title != "" {
		s += " (" + t.Unit.Title + ")"
	}
	return fmt.Sprintf("%s, %s at its %s step", s, t.Unit.Status, t.Step.Name)
}

// CodeDoneCheckpoint is the code of the pause after a story's commit that
// a done_checkpoint asks for (BMAD 6.12's stories.yaml).
const CodeDoneCheckpoint = bmad.CodeDoneReview

// Checkpoint is the kind of pause an escalation is when the run made it
// on purpose for a person: bmad.CodePlanReview (a plan to approve or
// replan), CodeDoneCheckpoint (a story to look at before the next); ""
// for anything else.
func Checkpoint(e *orchestrator.Escalation) string {
	if e == nil {
		return ""
	}
	switch e.Code {
	case bmad.CodePlanReview, CodeDoneCheckpoint:
		return e.Code
	}
	return ""
}
