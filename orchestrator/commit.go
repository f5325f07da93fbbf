package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// commitStep marks the story done and commits it: one commit per story. A
// commit this run already made for the story (found by its trailers) counts,
// so a resumed run never commits a story twice.
func (e *Engine) commitStep(ctx context.Context, u *Unit, st *StepState) stepEnd {
	sp := e.Policy.Step(StepCommit)
	e.updateUnit(u, func(*State) { st.Status = StatusRunning })
	e.emit(Event{Kind: EventStepStarted, Unit: u.Dotted, Step: StepCommit, Agent: "git"})
	req, skip := e.commitRequest(u)
	if skip != "" {
		e.skip(u, st, skip)
		return stepOK
	}
	if u.pipelined() && sp.Enabled {
		if err := e.beforeLanding(ctx, u, &req); err != nil {
			b, ok := AsBlocker(err)
			if !ok {
				b = &Blocker{Code: "land_failed", Err: err, Action: escalationAction(u, st)}
			}
			e.escalateBlocker(u, st, b)
			return stepEscalated
		}
	}
	if sp.Action == ActionAgent || !sp.Enabled {
		// An agent commits (the story is done first, so its commit carries
		// that), or nobody does.
		if err := e.markDone(u); err != nil {
			e.escalate(u, st, err.Error())
			return stepEscalated
		}
		if sp.Action == ActionAgent {
			return e.agentStep(ctx, u, st)
		}
		e.verified(ctx, u, st, "no commit: disabled by the workflow policy")
		return stepOK
	}
	if u.Worktree != "" && e.Worktrees != nil {
		return e.landStep(ctx, u, st, req)
	}
	return e.gitCommit(ctx, u, st, sp, req)
}

// gitCommit commits the unit with git, retrying a failure (also a failure to
// look for an earlier commit, which could otherwise commit the story twice)
// up to the step's retries, then escalating.
func (e *Engine) gitCommit(ctx context.Context, u *Unit, st *StepState, sp StepPolicy, req CommitRequest) stepEnd {
	var lastErr error
	e.treeWritten() // whatever it finds, the commit step changes the index or the tree
	for failures := 0; ; failures++ {
		if failures > sp.Retries {
			e.escalate(u, st, fmt.Sprintf("commit failed %d times: %v", failures, lastErr))
			return stepEscalated
		}
		if wait := e.Policy.backoff(sp, failures); wait > 0 {
			if e.Clock.Sleep(ctx, wait) != nil {
				return stepInterrupted
			}
		}
		if ctx.Err() != nil {
			return stepInterrupted
		}
		sha, found, err := e.Git.Find(ctx, req)
		switch {
		case err != nil:
			err = fmt.Errorf("look for an earlier commit of the story: %w", err)
		case found:
			// The run that made it may have died before the index followed HEAD.
			if err = e.Git.SyncIndex(ctx, sha); err == nil {
				e.committed(ctx, u, st, sha, "commit found from an earlier attempt")
				return stepOK
			}
			err = fmt.Errorf("bring the index in step with the earlier commit: %w", err)
		default:
			if sha, err = e.commitOnce(ctx, u, req); err == nil {
				e.committed(ctx, u, st, sha, "")
				return stepOK
			}
		}
		if b, ok := AsBlocker(err); ok {
			e.escalateBlocker(u, st, b)
			return stepEscalated
		}
		lastErr = err
		now := e.Clock.Now()
		e.updateUnit(u, func(s *State) { s.addLog(now, u.Dotted, StepCommit, "commit failed: "+err.Error()) })
	}
}

// commitRequest describes the unit's commit; skip says why there is none
// (a retrospective that did not finish leaves nothing worth a commit).
func (e *Engine) commitRequest(u *Unit) (req CommitRequest, skip string) {
	req = CommitRequest{RunID: e.state.RunID, Retro: u.Kind == KindRetro,
		Story: StoryInfo{Key: u.Key, Dotted: u.Dotted, Epic: u.Epic, Title: u.Title}}
	if req.Retro {
		if r := u.Step(StepRetro); r == nil || r.Status != StatusVerified {
			return req, "the retrospective did not finish"
		}
		return req, ""
	}
	if u.Work != nil {
		if u.Base == "" {
			return req, "nothing was dispatched: every item was closed by hand meanwhile"
		}
		return req, ""
	}
	if info, err := e.Backlog.Story(u.Key); err == nil {
		req.Story = info
	}
	return req, ""
}

// commitOnce sets the story done in the BMAD files, so the commit carries its
// final status, and commits. Commits take turns, so a parallel story's done
// status never lands in another story's commit.
func (e *Engine) commitOnce(ctx context.Context, u *Unit, req CommitRequest) (string, error) {
	e.commitMu.Lock()
	defer e.commitMu.Unlock()
	e.treeWritten()
	defer e.treeWritten()
	if u.Kind == KindStory {
		if err := e.Backlog.MarkStoryDone(u.Key); err != nil {
			return "", fmt.Errorf("mark story %s done: %w", u.Dotted, err)
		}
	}
	if err := e.commitContent(ctx, u, &req); err != nil {
		return "", fmt.Errorf("list the changes of %s: %w", u.Dotted, err)
	}
	e.keepFileList(u, &req)
	return e.Git.Commit(ctx, req)
}

// keepFileList makes the story file's File List name every path the commit
// holds, so the human record matches what was committed, and puts the story
// file in the commit. A failure is logged, never fatal: the commit is what
// matters.
func (e *Engine) keepFileList(u *Unit, req *CommitRequest) {
	k, ok := e.Backlog.(FileListKeeper)
	if !ok || u.Kind != KindStory {
		return
	}
	file, added, err := k.KeepFileList(u.Key, req.Paths)
	if err != nil {
		e.Log.Warn().Err(err).Str("story", u.Dotted).Msg("cannot update the story's File List")
		return
	}
	if len(added) == 0 {
		return
	}
	if !slices.Contains(req.Paths, file) {
		req.Paths = append(req.Paths, file)
	}
	if req.Changed != nil {
		req.Changed[file] = "rewritten for its File List" // changed now, whatever it was before
	}
	now := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		s.addLog(now, u.Dotted, StepCommit, fmt.Sprintf("File List: added %s", strings.Join(added, ", ")))
	})
}

func (e *Engine) committed(ctx context.Context, u *Unit, st *StepState, sha, why string) {
	e.updateUnit(u, func(*State) { u.Commit = sha })
	note := shortSHA(sha)
	if why != "" {
		note += " (" + why + ")"
	}
	e.verified(ctx, u, st, note)
}

func shortSHA(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

func (e *Engine) markDone(u *Unit) error {
	if u.Kind != KindStory {
		return nil
	}
	e.treeWritten()
	return e.Backlog.MarkStoryDone(u.Key)
}

// escalationAction tells the human what to do about an escalated step.
func escalationAction(u *Unit, st *StepState) string {
	resume := "then run `story-automator run --resume`"
	last := st.lastFinished()
	logHint := ""
	if last != nil && last.OutputFile != "" {
		logHint = fmt.Sprintf(" The last session's output is in %s.", last.OutputFile)
	}
	switch {
	case st.Name == StepReview && last != nil && last.FinalState == FinalIncomplete:
		return fmt.Sprintf("Read the review notes in story %s's file, fix what they ask for (or set the story to done in sprint-status.yaml if you accept it), %s; it gets a fresh set of review cycles.%s",
			u.Dotted, resume, logHint)
	case st.Name == StepCommit:
		return fmt.Sprintf("Fix what stops git from committing (hooks, identity, conflicts; see the action log), %s.", resume)
	case st.Name == StepCreate:
		return fmt.Sprintf("Check that story %s is declared in the epics and that the agent can run; write the story file by hand if need be (create is then skipped), %s.%s",
			u.Dotted, resume, logHint)
	default:
		return fmt.Sprintf("Find out why the %s step of %s did not finish verified (agent installed and logged in? the verifier's detail in the action log), fix it, %s.%s",
			st.Name, u.Dotted, resume, logHint)
	}
}
