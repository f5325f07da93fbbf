package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/workflows"
)

// StatusParked is a unit whose escalation needs a person and concerns it
// alone: its work is kept (see Parked.Ref) and the run goes on without it;
// the units that depend on it wait.
const StatusParked = "parked"

// OutcomeDoneWithParked: every unit is done but the parked ones and those
// that depend on them; `run --resume` takes the parked ones up again.
const OutcomeDoneWithParked Outcome = "done_with_parked"

// EventParked: a unit was parked (Reason, Message = its action, Code).
const EventParked = "parked"

// What an escalation that concerns one story does (run --on-escalation,
// workflow.yaml onEscalation).
const (
	// OnEscalationPark parks the story and goes on (the default).
	OnEscalationPark = workflows.OnEscalationPark
	// OnEscalationPause pauses the whole run, as any escalation.
	OnEscalationPause = workflows.OnEscalationPause
)

// CodeRetriesExhausted is the code of a story parked because a step ran
// out of attempts.
const CodeRetriesExhausted = "retries_exhausted"

// ParkRef is the ref a parked story's work is kept at.
func ParkRef(run, story string) string {
	return "refs/story-automator/parked/" + run + "/" + story
}

// Parked is why a unit is parked, what a person does about it, and where
// its work is kept.
type Parked struct {
	At     string `json:"at"`
	Step   string `json:"step"`
	Reason string `json:"reason"`
	Action string `json:"action"`
	Code   string `json:"code,omitempty"`
	// Ref holds the story's work as it was parked ("" while it is being
	// kept, or when there was none to keep); Commit is its commit.
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// ParkRequest asks a repository to keep a parked story's work at Ref.
type ParkRequest struct {
	RunID string
	Story string
	Ref   string
	// Paths are the project-relative paths that hold the story's work in
	// the project's tree (a story in its own worktree keeps all of it).
	Paths   []string
	Message string
}

// Parker keeps a parked story's work that lives in the project's tree.
type Parker interface {
	// Park commits the request's paths as the work tree has them on top
	// of HEAD (an earlier commit at Ref its second parent), points Ref at
	// that commit and only then sets the paths back to HEAD in the tree.
	// It returns the commit ("" when the paths hold no change).
	Park(ctx context.Context, req ParkRequest) (sha string, err error)
	// Unpark brings the work parked at ref back into the work tree (not
	// the index): the change of its commit over its first parent. No ref,
	// or work already there (a person took it back), is left as it is;
	// work that does not apply is an error, and stays on the ref.
	Unpark(ctx context.Context, ref string) (restored bool, err error)
}

// WorktreeParker keeps a parked story's work in its own worktree.
type WorktreeParker interface {
	// ParkWorktree commits everything that changed in dir (the project's
	// folder in the story's worktree) on the worktree's branch and points
	// Ref at the branch's tip, which it returns.
	ParkWorktree(ctx context.Context, dir string, req ParkRequest) (sha string, err error)
}

// parks reports whether the blocker parks its story rather than pausing
// the run: it concerns that story alone and the run parks.
func (e *Engine) parks(b *Blocker) bool {
	return e.state.Config.OnEscalation == OnEscalationPark && (b.Park || b.Code == CodeMergeConflict)
}

// stopOn ends a step on a blocker: its story parks when the blocker
// concerns it alone (see parks), else the run pauses.
func (e *Engine) stopOn(ctx context.Context, u *Unit, st *StepState, b *Blocker) stepEnd {
	if e.parks(b) {
		e.park(ctx, u, st, b)
		return stepBlocked
	}
	if b.Code == CodeRetriesExhausted {
		e.escalate(u, st, b.Error())
	} else {
		e.escalateBlocker(u, st, b)
	}
	return stepEscalated
}

// park sets one story aside for a person and lets the run go on without
// it. It is recorded parked first, then its work is kept at its ref, then
// the tree is set back: a run killed in between resumes the story with its
// work in the tree or on its ref, never without it.
func (e *Engine) park(ctx context.Context, u *Unit, st *StepState, b *Blocker) {
	ctx = context.WithoutCancel(ctx)
	now := e.Clock.Now()
	ref := ParkRef(e.state.RunID, u.Key)
	var p Parked
	e.updateUnit(u, func(s *State) {
		st.Status, st.Note, u.Status = StatusEscalated, b.Error(), StatusParked
		p = Parked{At: marker.Timestamp(now), Step: st.Name, Code: b.Code,
			Reason: fmt.Sprintf("%s %s of %s: %s", st.Name, kindWord(u), u.Dotted, b.Error()),
			Action: b.Action}
		if p.Action == "" {
			p.Action = escalationAction(u, st)
		}
		u.Parked = &p
		s.addLog(now, u.Dotted, st.Name, "parked: "+b.Error())
	})
	sha, err := e.keepParked(ctx, u, st, ref)
	now = e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		switch {
		case err != nil:
			u.Parked.Action += " Its work could not be kept on a ref (" + err.Error() + "): it is still in " + e.treeOf(u) + "."
			s.addLog(now, u.Dotted, st.Name, "keep the parked work: "+err.Error())
		case sha != "":
			u.Parked.Ref, u.Parked.Commit = ref, sha
			u.Parked.Action += " Its work is kept at " + ref + keepHint(u)
			s.addLog(now, u.Dotted, st.Name, "its work is kept at "+ref+" ("+shortSHA(sha)+")")
		}
		s.addLog(now, u.Dotted, st.Name, "the other stories go on; the ones that depend on "+u.Dotted+" wait")
		p = *u.Parked
	})
	e.emit(Event{Kind: EventParked, Unit: u.Dotted, Step: st.Name, Reason: p.Reason, Message: p.Action, Code: p.Code})
}

// keepParked keeps the parked unit's work at ref: in its worktree, all of
// it on its branch; in the project's tree, the paths its commit would take.
func (e *Engine) keepParked(ctx context.Context, u *Unit, st *StepState, ref string) (string, error) {
	req := ParkRequest{RunID: e.state.RunID, Story: u.Key, Ref: ref,
		Message: fmt.Sprintf("story-automator: parked %s %s at its %s step\n\n%s\n", kindWord(u), u.Dotted, st.Name, u.Parked.Reason)}
	if u.Worktree != "" && e.Worktrees != nil {
		wp, ok := e.Worktrees.(WorktreeParker)
		if !ok {
			return "", nil
		}
		e.commitMu.Lock()
		defer e.commitMu.Unlock()
		return wp.ParkWorktree(ctx, u.Worktree, req)
	}
	pk, ok := e.Git.(Parker)
	if !ok {
		return "", nil
	}
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	e.treeWritten()
	defer e.treeWritten()
	snap, err := e.Git.Snapshot(ctx)
	if err != nil {
		return "", err
	}
	req.Paths = e.commitPaths(u, snap)
	if len(req.Paths) == 0 {
		return "", nil
	}
	return pk.Park(ctx, req)
}

// unparkAll brings back, as the run resumes, the work of each story
// parked in the project's tree: `run --resume` takes the story up where
// it was parked. The ref stays (a person may want it); a story in its own
// worktree has its work there already. Other stories landed on the
// project's branch while it was parked: its base is taken again, so its
// one commit takes its own work alone.
func (e *Engine) unparkAll(ctx context.Context) {
	pk, _ := e.Git.(Parker)
	for _, u := range e.state.Units {
		if u.Status != StatusParked || u.Worktree != "" {
			continue
		}
		e.updateUnit(u, func(*State) { u.Base = "" })
		if pk == nil {
			continue
		}
		// The ref by its name: a run killed while it parked may have kept
		// the work there without living to record it.
		ref := ParkRef(e.state.RunID, u.Key)
		restored, err := pk.Unpark(ctx, ref)
		now := e.Clock.Now()
		e.updateUnit(u, func(s *State) {
			switch {
			case err != nil:
				s.addLog(now, u.Dotted, "", "its parked work at "+ref+" does not apply to the tree as it is ("+err.Error()+"); the story goes on with the tree as it is, the ref kept")
			case restored:
				s.addLog(now, u.Dotted, "", "taken up again with its parked work from "+ref)
			default:
				s.addLog(now, u.Dotted, "", "taken up again; its parked work, if any, is in the tree already")
			}
		})
	}
	e.treeWritten()
}

// keepHint says how to take a parked story's work back.
func keepHint(u *Unit) string {
	if u.Worktree != "" {
		return " (the tip of its worktree's branch, " + u.Worktree + ")."
	}
	return " and the tree is left clean for the next story, its spec among the work: `story-automator resolve " + u.Dotted + "` and `story-automator run --resume` bring it back first (`git cherry-pick --no-commit " + u.Parked.Ref + "` does too, to fix it by hand)."
}

func (e *Engine) treeOf(u *Unit) string {
	if u.Worktree != "" {
		return u.Worktree
	}
	return "the project's tree"
}

// parkedUnder is a parked unit u depends on, directly or not, or nil.
func parkedUnder(s *State, u *Unit, seen map[string]bool) *Unit {
	for _, k := range u.DependsOn {
		d := s.Unit(k)
		if d == nil || seen[k] {
			continue
		}
		seen[k] = true
		if d.Status == StatusParked {
			return d
		}
		if on := parkedUnder(s, d, seen); on != nil {
			return on
		}
	}
	return nil
}

// onlyParkedLeft reports whether every unit not done is parked or waits on
// a parked one, and at least one is parked.
func onlyParkedLeft(s *State) bool {
	parked := false
	for _, u := range s.Units {
		switch {
		case u.Status == StatusDone:
		case u.Status == StatusParked:
			parked = true
		case u.Status == StatusPending && parkedUnder(s, u, map[string]bool{}) != nil:
		default:
			return false
		}
	}
	return parked
}

// parkedText names the parked units for the run's pause reason.
func parkedText(s *State) string {
	var names []string
	for _, u := range s.Units {
		if u.Status == StatusParked {
			names = append(names, u.Dotted)
		}
	}
	return "done with parked stories (" + strings.Join(names, ", ") + "): settle each as its action says, then run `story-automator run --resume`"
}

// logParkedWaitingLocked logs each pending unit that waits on a parked one.
func (e *Engine) logParkedWaitingLocked(now time.Time) {
	s := e.state
	for _, u := range s.Units {
		if u.Status != StatusPending {
			continue
		}
		if on := parkedUnder(s, u, map[string]bool{}); on != nil {
			s.addLog(now, u.Dotted, "", "waits on "+on.Dotted+", parked")
		}
	}
}
