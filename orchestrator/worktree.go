package orchestrator

import "context"

// CodeMergeConflict is the escalation code of a story whose commit does not
// apply on the user's branch.
const CodeMergeConflict = "merge_conflict"

// Isolation modes of a parallel run (--isolate).
const (
	// IsolateWorktree gives each story its own git worktree (the default
	// when more than one story runs at a time).
	IsolateWorktree = "worktree"
	// IsolateNone runs every story in the project's one working tree.
	IsolateNone = "none"
)

// enterWorktree gives a story its worktree before its first step: made from
// the user's branch as it is now, which holds the commits of the stories it
// depends on (they landed before it became ready). A resumed story keeps the
// worktree it had, or gets it recreated with the commits of its branch.
func (e *Engine) enterWorktree(ctx context.Context, u *Unit) error {
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	e.treeWritten()
	defer e.treeWritten()
	dir, branch, err := e.Worktrees.Enter(ctx, u.Key)
	if err != nil {
		return err
	}
	now := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		if u.Worktree != dir {
			s.addLog(now, u.Dotted, "", "worktree "+dir+" on branch "+branch)
		}
		u.Worktree = dir
	})
	return nil
}

// landStep commits a story in its worktree and lands the commit on the
// user's branch (see Worktrees.Land), then removes the worktree and its
// branch. A merge conflict escalates the story alone with CodeMergeConflict
// (see Engine.block) and keeps both; a run that parks parks the story.
func (e *Engine) landStep(ctx context.Context, u *Unit, st *StepState, req CommitRequest) stepEnd {
	ctx = context.WithoutCancel(ctx)
	end, parkOn := e.landLocked(ctx, u, st, req)
	if parkOn != nil {
		e.park(ctx, u, st, parkOn)
	}
	return end
}

// landLocked lands the story under the commit lock; a conflict its story
// parks on is returned, to park once the lock is released.
func (e *Engine) landLocked(ctx context.Context, u *Unit, st *StepState, req CommitRequest) (stepEnd, *Blocker) {
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	e.treeWritten()
	defer e.treeWritten()
	sha, err := e.land(ctx, u, req)
	if err != nil {
		b, ok := AsBlocker(err)
		switch {
		case ok && b.Code == CodeMergeConflict && e.parks(b):
			return stepBlocked, b
		case ok && b.Code == CodeMergeConflict:
			// The other stories go on: the conflict is this story's alone.
			e.block(u, st, b)
			return stepBlocked, nil
		case ok:
			e.escalateBlocker(u, st, b)
		default:
			e.escalate(u, st, err.Error())
		}
		return stepEscalated, nil
	}
	e.committed(ctx, u, st, sha, "")
	if err := e.Worktrees.Remove(ctx, u.Key); err != nil {
		now := e.Clock.Now()
		e.updateUnit(u, func(s *State) { s.addLog(now, u.Dotted, StepCommit, "worktree left: "+err.Error()) })
		return stepOK, nil
	}
	e.updateUnit(u, func(*State) { u.Worktree = "" })
	return stepOK, nil
}

func (e *Engine) land(ctx context.Context, u *Unit, req CommitRequest) (string, error) {
	// Landed before the run was killed: the commit is on the user's branch.
	if sha, found, err := e.Git.Find(ctx, req); err != nil || found {
		return sha, err
	}
	return e.Worktrees.Land(ctx, u.Worktree, req)
}

// isolation is the isolation a run uses: the one asked for, else a worktree
// per story when stories run side by side.
func isolation(asked string, parallel int) string {
	if asked != "" {
		return asked
	}
	if parallel > 1 {
		return IsolateWorktree
	}
	return IsolateNone
}

// worktreesOf is the run's Worktrees under IsolateWorktree (nil otherwise,
// and when the run's adapters make none, as in tests with fakes).
func worktreesOf(st *State, d Deps) Worktrees {
	if d.Worktrees == nil || st.Config.Isolate != IsolateWorktree {
		return nil
	}
	return d.Worktrees(st.RunID)
}

// dropLandedWorktrees removes the worktrees of stories whose commit landed
// before a killed run could remove them.
func (e *Engine) dropLandedWorktrees(ctx context.Context) {
	if e.Worktrees == nil {
		return
	}
	for _, u := range e.state.Units {
		if c := u.Step(StepCommit); u.Worktree == "" || c == nil || c.Status != StatusVerified {
			continue
		}
		if err := e.Worktrees.Remove(ctx, u.Key); err != nil {
			continue
		}
		e.updateUnit(u, func(*State) { u.Worktree = "" })
	}
}
