package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/story-automator/story-automator/internal/verify"
	"github.com/story-automator/story-automator/marker"
)

// stepEnd is how driving one step ended.
type stepEnd int

const (
	stepOK stepEnd = iota
	stepEscalated
	stepInterrupted
	stepHalted
	// stepBlocked: the step escalated its unit alone (see Engine.block).
	stepBlocked
)

// driveUnit runs a unit's unfinished steps in order and reports how it ended.
func (e *Engine) driveUnit(ctx context.Context, u *Unit) unitEnd {
	if e.Worktrees != nil && u.Kind == KindStory {
		if err := e.enterWorktree(ctx, u); err != nil {
			for _, st := range u.Steps {
				if !st.finished() {
					e.escalate(u, st, "make the story's worktree: "+err.Error())
					return unitEscalated
				}
			}
		}
	}
	for _, st := range u.Steps {
		if st.finished() {
			continue
		}
		if ctx.Err() != nil {
			return unitInterrupted
		}
		if e.halting.Load() {
			return unitHalted
		}
		var end stepEnd
		switch st.Name {
		case StepCreate:
			end = e.createStep(ctx, u, st)
		case StepCommit:
			if end = e.settleRetro(u); end == stepOK {
				end = e.commitStep(ctx, u, st)
			}
		default:
			end = e.agentStep(ctx, u, st)
		}
		switch end {
		case stepEscalated:
			return unitEscalated
		case stepInterrupted:
			return unitInterrupted
		case stepHalted:
			return unitHalted
		case stepBlocked:
			return unitBlocked
		}
	}
	if !e.retroGate(u) {
		return unitEscalated
	}
	e.unitFinished(ctx, u)
	if !e.landingGate(u) {
		return unitEscalated
	}
	return unitDone
}

// createStep skips create when the story file already exists (written by
// hand, or by an attempt whose verification the orchestrator did not live to see).
func (e *Engine) createStep(ctx context.Context, u *Unit, st *StepState) stepEnd {
	info, err := e.Backlog.Story(u.Key)
	if err == nil && info.HasFile {
		e.skip(u, st, "the story file exists")
		return stepOK
	}
	// create writes the story from the epics: without them no agent can.
	if c, ok := e.Backlog.(EpicChecker); ok && u.Kind != KindRetro {
		if err := c.CheckEpicStory(u.Key); err != nil {
			b, isBlocker := AsBlocker(err)
			if !isBlocker {
				b = &Blocker{Code: "workflow_io", Err: err, Action: escalationAction(u, st)}
			}
			e.escalateBlocker(u, st, b)
			return stepEscalated
		}
	}
	return e.agentStep(ctx, u, st)
}

// agentStep runs attempts until one is verified or the budget is spent.
func (e *Engine) agentStep(ctx context.Context, u *Unit, st *StepState) stepEnd {
	sp := e.Policy.Step(st.Name)
	if st.VerifyFirst && e.verifyFirst(ctx, u, st) {
		return stepOK
	}
	noted := ""
	for {
		agents, note, blocker := e.readyAgents(u, agentsFor(sp, e.state.Config))
		if blocker != nil {
			e.escalateBlocker(u, st, blocker)
			return stepEscalated
		}
		if note != "" && note != noted {
			noted = note
			e.updateUnit(u, func(s *State) { s.addLog(e.Clock.Now(), u.Dotted, st.Name, note) })
		}
		mv := nextMove(st, sp, e.Policy, agents)
		if mv.Exhausted {
			return e.exhausted(ctx, u, st, sp, mv.Reason)
		}
		if mv.Backoff > 0 {
			e.emit(Event{Kind: EventBackoff, Unit: u.Dotted, Step: st.Name, Wait: mv.Backoff.String()})
			if e.Clock.Sleep(ctx, mv.Backoff) != nil {
				return stepInterrupted
			}
		}
		if e.halting.Load() {
			return stepHalted
		}
		if end, ok := e.clearForAttempt(ctx, u, st, &mv, agents); !ok {
			return end
		}
		if e.overBudget(u, st) {
			return stepEscalated
		}
		prompt, end, over := e.dispatch(ctx, u, st, mv)
		if over {
			return end
		}
		a, blocker, out := e.attempt(ctx, u, st, sp, mv, e.gitFingerprint(), prompt)
		if blocker != nil && a.FinalState != FinalInterrupted {
			return e.stopOn(ctx, u, st, blocker)
		}
		if out.Pause != nil {
			return e.pauseAt(u, st, out.Pause)
		}
		if end, done := e.afterAttempt(ctx, u, st, sp, a); done {
			return end
		}
	}
}

// afterAttempt settles what an attempt's end means for its step: done
// (verified, interrupted, over budget) or another attempt, after noting a
// limit or waiting out an API fault.
func (e *Engine) afterAttempt(ctx context.Context, u *Unit, st *StepState, sp StepPolicy, a Attempt) (stepEnd, bool) {
	switch {
	case a.FinalState == FinalInterrupted:
		return stepInterrupted, true
	case a.FinalState == FinalLimited && IsWaitLimit(a.Reason):
		e.noteLimit(u, a)
	case a.FinalState == FinalLimited:
		if end, ok := e.afterAPIFault(ctx, u, st, sp); !ok {
			return end, true
		}
	case a.FinalState != FinalError:
		e.clearLimit(a.Agent)
	}
	if a.FinalState == FinalCompleted {
		// A verified step is kept whatever it cost; the budget stops
		// the next attempt, before it starts.
		e.verified(ctx, u, st, "")
		return stepOK, true
	}
	if e.overBudget(u, st) {
		return stepEscalated, true
	}
	return stepOK, false
}

// verifyFirst runs the verifier of a step that escalated before the run
// resumed and records the step verified when it passes: the human finished
// it (for example set the story done after reading the review).
func (e *Engine) verifyFirst(ctx context.Context, u *Unit, st *StepState) bool {
	e.updateUnit(u, func(*State) { st.VerifyFirst = false })
	req := StepRequest{RunID: e.state.RunID, Story: u.Key, Kind: u.Kind, Epic: u.Epic, Step: st.Name, WorkDir: u.Worktree}
	if u.Kind == KindRetro {
		req.Story = u.Epic
	}
	var verdict verify.Verdict
	var err error
	if out, read := e.resumeOutcome(ctx, u, st); read {
		// The pipeline reads the step from the files.
		verdict = verify.Verdict{Verified: out.FinalState == FinalCompleted, Detail: out.Reason}
	} else {
		var v verify.Verifier
		if v, err = e.Steps.StepVerifier(req); err == nil {
			verdict = v.Verify(ctx)
			err = verdict.ContractErr
		}
	}
	verified, detail := verdict.Verified, verdict.Detail
	now := e.Clock.Now()
	msg := "checked on resume before any agent: not verified"
	switch {
	case err != nil:
		msg += " (" + err.Error() + ")"
	case detail != "":
		msg += " (" + detail + ")"
	}
	if verified && err == nil {
		msg = "checked on resume before any agent: verified, finished by hand"
	}
	e.updateUnit(u, func(s *State) { s.addLog(now, u.Dotted, st.Name, msg) })
	if !verified || err != nil {
		return false
	}
	e.verified(ctx, u, st, "finished by hand: verified on resume")
	return true
}

// attempt runs one child session for the step and records it before and
// after. It returns the attempt as recorded and, when no retry can help,
// the blocker that stops the step.
// attempt runs one attempt of the step. guard is the sum of the
// repository's config and hooks as the attempt starts: when the attempt
// changed them, the attempt's blocker is git_tampered, found before the
// run's own git looks at the project (its status would run a planted
// fsmonitor or filter).
func (e *Engine) attempt(ctx context.Context, u *Unit, st *StepState, sp StepPolicy, mv move, guard, prompt string) (Attempt, *Blocker, StepOutcome) {
	start := e.Clock.Now()
	var idx int
	e.updateUnit(u, func(s *State) {
		st.Status = StatusRunning
		st.Attempts = append(st.Attempts, Attempt{N: len(st.Attempts) + 1, Cycle: mv.Cycle, Agent: mv.Agent,
			Role: mv.Role, StartedAt: marker.Timestamp(start)})
		idx = len(st.Attempts) - 1
	})
	a := st.Attempts[idx]
	e.emit(Event{Kind: EventStepStarted, Unit: u.Dotted, Step: st.Name, Attempt: a.N, Cycle: a.Cycle, Agent: a.Agent, Role: a.Role})
	model := e.modelFor(st.Name)
	req := StepRequest{RunID: e.state.RunID, Story: u.Key, Kind: u.Kind, Epic: u.Epic, Step: st.Name, Agent: mv.Agent, Role: mv.Role,
		Model: model, Attempt: a.N, Cycle: mv.Cycle, Timeout: sp.Timeout, WorkDir: u.Worktree, Host: u.Host, Prompt: prompt,
		Started: func(session, output string) {
			e.updateUnit(u, func(*State) { st.Attempts[idx].Session, st.Attempts[idx].OutputFile = session, output })
		}}
	if u.Kind == KindRetro {
		req.Story = u.Epic
	}
	req.Adopt = adoptable(u, st, idx)
	rp, refused := e.retroPrompt(u, mv.Agent)
	if rp != "" {
		req.Prompt = rp
	}
	id, before, tracked := e.beginAttempt(ctx)
	var res StepResult
	var err error
	if refused != nil {
		res, err = StepResult{FinalState: FinalError, Reason: refused.Error()}, refused
	} else {
		res, err = e.Steps.RunStep(ctx, req)
	}
	if errors.Is(err, ErrHostLost) {
		e.hostLost(u, st.Name)
	}
	tampered := e.gitUntouched(guard)
	if tracked {
		e.endAttempt(ctx, u, id, before, tampered == nil)
	}
	final, reason := res.FinalState, res.Reason
	switch {
	case ctx.Err() != nil && e.escalated.Load():
		final, reason = FinalInterrupted, "stopped: another step escalated"
	case ctx.Err() != nil:
		final, reason = FinalInterrupted, "the run was interrupted"
	case err != nil:
		final, reason = FinalError, err.Error()
	case final == "":
		final = FinalError
	}
	var out StepOutcome
	if prompt != "" && final != FinalInterrupted && final != FinalError && final != FinalLimited && res.Blocker == nil {
		out = e.outcome(ctx, u, st, mv.Agent, mv.Cycle, res)
		if out.FinalState != "" {
			final, reason = out.FinalState, out.Reason
		}
	}
	end := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		at := &st.Attempts[idx]
		at.FinalState, at.Reason, at.Verifier, at.Detail = final, reason, res.Verifier, res.Detail
		if final == FinalLimited && !res.ResetsAt.IsZero() {
			at.ResetsAt = marker.Timestamp(res.ResetsAt)
		}
		if res.Session != "" {
			at.Session, at.OutputFile = res.Session, res.OutputFile
		}
		at.EndedAt = marker.Timestamp(end)
		at.WallMs, at.AgentMs = end.Sub(start).Milliseconds(), res.AgentTime.Milliseconds()
		if final == FinalError && at.Session == "" {
			at.UsageNote = "the attempt never started an agent"
		} else {
			e.recordUsage(at, res, model)
		}
		s.addLog(end, u.Dotted, st.Name, describeAttempt(*at))
		a = *at
	})
	e.emit(Event{Kind: EventStepFinished, Unit: u.Dotted, Step: st.Name, Attempt: a.N, Cycle: a.Cycle, Agent: a.Agent,
		Role: a.Role, FinalState: final, Reason: reason, Session: res.Session, Model: a.Model, AttemptUsage: a.Usage,
		Usage: e.usageNow(), ResetsAt: a.ResetsAt})
	blocker := res.Blocker
	if b, ok := AsBlocker(err); ok && blocker == nil {
		blocker = b
	}
	if blocker == nil && final != FinalInterrupted {
		blocker = tampered
	}
	if blocker == nil {
		blocker = out.Blocker
	}
	return a, blocker, out
}

// verified records a verified step and bumps the marker's heartbeat.
func (e *Engine) verified(ctx context.Context, u *Unit, st *StepState, note string) {
	now := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		st.Status, st.VerifiedAt, st.VerifyFirst = StatusVerified, marker.Timestamp(now), false
		if note != "" {
			st.Note = note
		}
		s.addLog(now, u.Dotted, st.Name, "verified")
	})
	e.emit(Event{Kind: EventStepVerified, Unit: u.Dotted, Step: st.Name})
	e.heartbeat(ctx, u.Epic, u.Dotted, st.Name, -1)
}

// skip records a step the story does not need.
func (e *Engine) skip(u *Unit, st *StepState, why string) {
	now := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		st.Status, st.Note, st.VerifyFirst = StatusSkipped, why, false
		s.addLog(now, u.Dotted, st.Name, "skipped: "+why)
	})
	e.emit(Event{Kind: EventStepSkipped, Unit: u.Dotted, Step: st.Name, Reason: why})
}

// exhausted gives up on a step: an optional one is recorded as failed and the
// unit goes on; any other parks its story or pauses the run (see stopOn).
func (e *Engine) exhausted(ctx context.Context, u *Unit, st *StepState, sp StepPolicy, reason string) stepEnd {
	now := e.Clock.Now()
	if sp.Optional {
		e.updateUnit(u, func(s *State) {
			st.Status, st.Note = StatusFailed, reason
			s.addLog(now, u.Dotted, st.Name, "optional step gave up, the story goes on: "+reason)
		})
		e.emit(Event{Kind: EventStepFailed, Unit: u.Dotted, Step: st.Name, Reason: reason})
		return stepOK
	}
	return e.stopOn(ctx, u, st, &Blocker{Code: CodeRetriesExhausted, Park: true, Err: errors.New(reason)})
}

// escalate pauses the run on a step: it records why and what to do, pauses
// the marker at once (no Stop hook blocks while the other units wind down)
// and stops the other units' sessions as an interrupt would.
func (e *Engine) escalate(u *Unit, st *StepState, reason string) {
	e.escalateWith(u, st, reason, "", "")
}

// escalateBlocker escalates a step at its first failure whose cause no retry
// changes, with the cause's own code and action.
func (e *Engine) escalateBlocker(u *Unit, st *StepState, b *Blocker) {
	e.escalateWith(u, st, b.Error(), b.Code, b.Action)
}

// escalateWith escalates with a code and action of the cause's own ("" =
// the step's generic action and run_escalated).
func (e *Engine) escalateWith(u *Unit, st *StepState, reason, code, action string) {
	esc, stop := e.recordEscalation(u, st, reason, code, action)
	e.escalated.Store(true)
	e.halting.Store(true)
	e.pauseMarker(string(OutcomeEscalated) + ": " + esc.Reason)
	if stop != nil {
		stop()
	}
	e.emit(Event{Kind: EventEscalated, Unit: u.Dotted, Step: st.Name, Reason: esc.Reason, Message: esc.Action, Code: esc.Code})
}

// block escalates one unit and lets the run go on without it: the units
// running and the ones that do not depend on it run and land; the ones that
// do (directly or not) stay pending, as its status is not done. The run
// ends escalated, as any escalated run, once nothing else can run, and
// `run --resume` takes the unit up again. A merge conflict blocks this way:
// it concerns that story's commit alone.
func (e *Engine) block(u *Unit, st *StepState, b *Blocker) {
	esc, _ := e.recordEscalation(u, st, b.Error(), b.Code, b.Action)
	now := e.Clock.Now()
	e.updateUnit(u, func(s *State) {
		s.addLog(now, u.Dotted, st.Name, "the other stories go on; the ones that depend on "+u.Dotted+" wait")
	})
	e.emit(Event{Kind: EventEscalated, Unit: u.Dotted, Step: st.Name, Reason: esc.Reason, Message: esc.Action, Code: esc.Code})
}

// recordEscalation marks the step and its unit escalated and makes it the
// run's escalation unless an earlier one is. It returns the escalation and
// the function that stops the running units.
func (e *Engine) recordEscalation(u *Unit, st *StepState, reason, code, action string) (Escalation, context.CancelFunc) {
	now := e.Clock.Now()
	var esc Escalation
	var stop context.CancelFunc
	e.updateUnit(u, func(s *State) {
		st.Status, st.Note, u.Status = StatusEscalated, reason, StatusEscalated
		esc = Escalation{At: marker.Timestamp(now), Unit: u.Dotted, Step: st.Name,
			Reason: fmt.Sprintf("%s %s of %s: %s", st.Name, kindWord(u), u.Dotted, reason),
			Action: escalationAction(u, st), Code: code}
		if action != "" {
			esc.Action = action
		}
		if s.Escalation == nil {
			s.Escalation = &esc
		}
		s.addLog(now, u.Dotted, st.Name, "escalated: "+reason)
		stop = e.stopUnits
	})
	return esc, stop
}

// logWaitingLocked logs, as an escalated run ends, each pending unit that
// waits on an escalated one (directly or through other pending units).
func (e *Engine) logWaitingLocked(now time.Time) {
	s := e.state
	for _, u := range s.Units {
		if u.Status != StatusPending {
			continue
		}
		if on := escalatedUnder(s, u, map[string]bool{}); on != nil {
			s.addLog(now, u.Dotted, "", "waits on "+on.Dotted+", escalated")
		}
	}
}

// escalatedUnder is an escalated unit u depends on, directly or not, or nil.
func escalatedUnder(s *State, u *Unit, seen map[string]bool) *Unit {
	for _, k := range u.DependsOn {
		d := s.Unit(k)
		if d == nil || seen[k] {
			continue
		}
		seen[k] = true
		if d.Status == StatusEscalated {
			return d
		}
		if on := escalatedUnder(s, d, seen); on != nil {
			return on
		}
	}
	return nil
}

// errNotRunsMarker makes a marker update write nothing: the marker is not this run's.
var errNotRunsMarker = errors.New("the marker is not this run's")

// pauseMarker pauses the run's marker with a reason.
func (e *Engine) pauseMarker(reason string) {
	if e.Marker == nil {
		return
	}
	now := e.Clock.Now()
	_, err := e.Marker.Modify(context.Background(), func(m *marker.Marker) error {
		if isRunsMarker(m, e.state.RunID) {
			m.Pause(reason)
			m.Touch(now)
		}
		return nil
	})
	if err != nil {
		e.Log.Warn().Err(err).Msg("escalation: cannot pause the marker")
	}
}

func kindWord(u *Unit) string {
	switch u.Kind {
	case KindRetro:
		return "retrospective"
	case KindSweep:
		return "sweep unit"
	case KindAction:
		return "action item"
	}
	return "story"
}

// unitFinished records a unit as done; a story lowers storiesRemaining.
func (e *Engine) unitFinished(ctx context.Context, u *Unit) {
	now := e.Clock.Now()
	remaining, done, total := 0, 0, 0
	e.updateUnit(u, func(s *State) {
		u.Status = StatusDone
		remaining = s.StoriesRemaining()
		done, total = s.StoryCounts()
		s.addLog(now, u.Dotted, "", kindWord(u)+" done")
	})
	e.emit(Event{Kind: EventUnitDone, Unit: u.Dotted, Done: done, Total: total})
	if u.Kind == KindStory {
		e.heartbeat(ctx, u.Epic, u.Dotted, StepCommit, remaining)
	}
}

// heartbeat records verified progress in the marker (docs/reference.md, "The marker"): a new
// heartbeat, where the run is, and, when remaining ≥ 0, storiesRemaining.
// A marker paused by hand stops the run after its current steps. A marker
// that is not this run's (another run's, or a loop started with --replace)
// is left alone.
func (e *Engine) heartbeat(ctx context.Context, epic, story, step string, remaining int) {
	if e.Marker == nil {
		return
	}
	now := e.Clock.Now()
	m, err := e.Marker.Modify(ctx, func(m *marker.Marker) error {
		if !isRunsMarker(m, e.state.RunID) {
			return errNotRunsMarker
		}
		m.Touch(now)
		m.Epic, m.CurrentStory, m.CurrentStep = epic, story, step
		if remaining >= 0 {
			// Parallel stories report counts taken at different moments: a
			// stale, higher count never overwrites a newer one.
			m.StoriesRemaining = min(m.StoriesRemaining, remaining)
		}
		return nil
	})
	if errors.Is(err, errNotRunsMarker) {
		return
	}
	if err != nil {
		e.Log.Warn().Err(err).Msg("heartbeat: cannot update the marker")
		if errors.Is(err, marker.ErrNotFound) {
			e.updateUnit(nil, func(s *State) {
				s.addLog(now, story, step, "the marker is gone; the Stop hook no longer guards this run")
			})
		}
		return
	}
	if m.Status == marker.StatusPaused && !e.escalated.Load() && !e.pausedByHand.Swap(true) {
		e.halting.Store(true)
		e.updateUnit(nil, func(s *State) {
			s.addLog(now, story, step, "the marker was paused by hand; stopping after the current steps")
		})
	}
}
