package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/marker"
)

// Outcome is how a run (or one call of Engine.Run) ended.
type Outcome string

// Outcomes of Engine.Run.
const (
	// OutcomeDone: every unit is done.
	OutcomeDone Outcome = "done"
	// OutcomeEscalated: a step ran out of attempts; the run is paused for a human.
	OutcomeEscalated Outcome = "escalated"
	// OutcomeInterrupted: the context ended (SIGINT); the run is paused.
	OutcomeInterrupted Outcome = "interrupted"
	// OutcomePaused: someone paused the marker by hand while the run went on.
	OutcomePaused Outcome = "paused"
	// OutcomeBudgetExceeded: a budget was reached; the run is paused.
	OutcomeBudgetExceeded Outcome = "budget_exceeded"
)

// Engine is the run loop: it drives every unit of a State through its steps.
type Engine struct {
	Steps   StepRunner
	Backlog Backlog
	Git     Repo
	// Marker is the run's marker; nil runs without one (dry tests).
	Marker *marker.Store
	Clock  Clock
	Policy Policy
	Report Reporter
	// Journal persists the state: every change journalled and synced before
	// the run acts on it, the whole document rewritten at most once a second
	// while changes come, and at the run's start and end (see journal.go).
	Journal *Journal
	// Save, when set instead, persists the whole state after every change.
	Save func(*State) error
	Log  zerolog.Logger
	// Worktrees, when set, gives each story its own git worktree
	// (--isolate worktree); nil runs every story in the project's tree.
	Worktrees Worktrees
	// ActionLog, when set, takes lines from beside the loop into the
	// state's action log while Run goes on.
	ActionLog *ActionLog
	// Jitter is added to a limit's reset before the run goes on (nil: a
	// random one under limitJitterMax).
	Jitter func() time.Duration
	// Pipeline is the project's pipeline: its hooks around a story's
	// attempts and landing (nil: the five steps, no hook).
	Pipeline Pipeline
	// Retro, when set, is the pipeline's retrospective with a verdict:
	// its prompt, its document read and its board set right, its gate.
	Retro Retrospective

	mu       sync.Mutex
	commitMu sync.Mutex
	state    *State
	saveErr  error
	halting  atomic.Bool
	// pausedByHand is set when a heartbeat finds the marker paused.
	pausedByHand atomic.Bool
	// escalated is set once a step escalated: the run stops at once.
	escalated atomic.Bool
	// stopUnits cancels the context every running unit works under.
	stopUnits context.CancelFunc
	// slots are the run's hosts and the units running on each.
	slots *hostSlots
	// inflight holds, per running attempt, the tree's snapshot from its start.
	inflight    map[int]Snapshot
	nextAttempt int
	// idle is the tree's snapshot from the end of the last attempt, taken
	// while no other attempt ran: the next attempt starts from it rather than
	// asking git again, unless treeEvents moved since (see beginAttempt).
	idle       Snapshot
	treeEvents uint64
	// sessionStart is when this call of Run began, activeBase the run's
	// active time before it (State.ActiveMs).
	sessionStart time.Time
	activeBase   time.Duration
	// gate is the run's wait on a limit while there is one (see limitwait.go).
	gate *waitGate
}

// unitEnd is how driving one unit ended.
type unitEnd int

const (
	unitDone unitEnd = iota
	unitEscalated
	unitInterrupted
	unitHalted
	// unitBlocked: the unit escalated alone (see Engine.block); the others go on.
	unitBlocked
)

// Run drives st until every unit is done, a step escalates, or ctx ends.
// The state is saved after every change, so a killed run resumes exactly.
func (e *Engine) Run(ctx context.Context, st *State) (Outcome, error) {
	if e.Report == nil {
		e.Report = DiscardReporter{}
	}
	e.state = st
	e.ActionLog.attach(e, st.ProjectRoot, st.Config.StateFile)
	var abandoned []string
	e.sessionStart, e.activeBase = e.Clock.Now(), time.Duration(st.ActiveMs)*time.Millisecond
	e.unparkAll(ctx)
	e.update(func(s *State) {
		abandoned = prepareResume(s)
		s.Status, s.PauseReason, s.Escalation = RunRunning, "", nil
		restartLimitClocks(s, e.sessionStart)
	})
	if e.Journal != nil {
		defer e.checkpoints()()
	}
	e.closeAbandoned(ctx, abandoned)
	e.dropLandedWorktrees(ctx)
	e.readAbandoned(abandoned)
	e.sweepTemps()
	done, total := st.StoryCounts()
	e.emit(Event{Kind: EventRunStarted, Done: done, Total: total, Message: st.RunID, Usage: e.usageNow(), Budget: e.budgetShown(),
		Sandbox: st.Config.SandboxMode()})
	if e.resumeWait(ctx) {
		e.schedule(ctx)
	}
	e.dropLandedWorktrees(context.WithoutCancel(ctx))
	return e.finish(ctx)
}

// schedule starts ready units on the run's hosts (see hostslots.go), each
// host's slots at a time, until none is left to start and none runs.
func (e *Engine) schedule(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	e.mu.Lock()
	e.stopUnits = cancel
	e.mu.Unlock()
	slots := e.newHostSlots()
	e.mu.Lock()
	e.slots = slots
	e.mu.Unlock()
	results := make(chan unitEnd)
	running := 0
	for {
		for slots.anyFree() && !e.halting.Load() && ctx.Err() == nil {
			u, _ := e.nextPlaced(slots)
			if u == nil {
				break
			}
			running++
			go func(u *Unit) {
				end := e.driveUnit(ctx, u)
				e.release(slots, u)
				results <- end
			}(u)
		}
		if running == 0 {
			return
		}
		if end := <-results; end == unitEscalated {
			e.halting.Store(true)
		}
		running--
	}
}

func (e *Engine) depsDone(u *Unit) bool {
	for _, d := range u.DependsOn {
		if dep := e.state.Unit(d); dep != nil && dep.Status != StatusDone {
			return false
		}
	}
	return true
}

// finish settles the run's status from how it ended.
func (e *Engine) finish(ctx context.Context) (Outcome, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state
	now := e.Clock.Now()
	var out Outcome
	switch {
	case s.Escalation != nil && s.Escalation.Code == CodeBudgetExceeded:
		out = OutcomeBudgetExceeded
	case s.Escalation != nil:
		out = OutcomeEscalated
		e.logWaitingLocked(now)
		e.logParkedWaitingLocked(now)
	case e.saveErr != nil:
		return "", e.saveErr
	case ctx.Err() == nil && !e.pausedByHand.Load() && onlyParkedLeft(s):
		out = OutcomeDoneWithParked
		s.PauseReason = parkedText(s)
		e.logParkedWaitingLocked(now)
	case ctx.Err() != nil:
		out = OutcomeInterrupted
		s.PauseReason = "interrupted (SIGINT or SIGTERM); unfinished steps run again on --resume"
	case e.pausedByHand.Load():
		out = OutcomePaused
		s.PauseReason = "the marker was paused by hand"
	case s.StoriesRemaining() > 0 || anyPending(s):
		s.Status = RunPaused
		s.PauseReason = "units are left whose dependencies can never be met"
		e.saveLocked()
		return "", errors.New(s.PauseReason)
	default:
		out = OutcomeDone
	}
	if out == OutcomeDone {
		s.Status, s.FinishedAt = RunDone, marker.Timestamp(now)
		s.addLog(now, "", "", "run finished: every story done")
	} else {
		s.Status = RunPaused
		for _, u := range s.Units {
			if u.Status == StatusRunning {
				u.Status = StatusPending
			}
			for _, st := range u.Steps {
				if st.Status == StatusRunning {
					st.Status = StatusPending
				}
			}
		}
		s.addLog(now, "", "", "run paused: "+pauseText(s))
	}
	e.saveLocked()
	return out, e.saveErr
}

func anyPending(s *State) bool {
	for _, u := range s.Units {
		if u.Status != StatusDone {
			return true
		}
	}
	return false
}

func pauseText(s *State) string {
	if s.Escalation != nil {
		return s.Escalation.Reason
	}
	return s.PauseReason
}

// update changes the state under the lock and saves it whole.
func (e *Engine) update(fn func(s *State)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn(e.state)
	e.saveLocked()
}

// updateUnit changes the state under the lock and saves the change: what fn
// did to unit u (nil: to none), the run's own fields and the log.
func (e *Engine) updateUnit(u *Unit, fn func(s *State)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn(e.state)
	e.persistLocked(u)
}

// saveLocked saves the whole state.
func (e *Engine) saveLocked() {
	e.stampLocked()
	switch {
	case e.Save != nil:
		e.saveFailed(e.Save(e.state))
	case e.Journal != nil:
		e.saveFailed(e.Journal.Checkpoint(e.state))
	}
}

// persistLocked saves a change of unit u (nil: of the run's own fields or
// log only).
func (e *Engine) persistLocked(u *Unit) {
	e.stampLocked()
	switch {
	case e.Save != nil:
		e.saveFailed(e.Save(e.state))
	case e.Journal != nil:
		e.saveFailed(e.Journal.Change(e.state, u))
	}
}

// stampLocked records the time of a change and the run's active time.
func (e *Engine) stampLocked() {
	e.state.UpdatedAt = marker.Timestamp(e.Clock.Now())
	if !e.sessionStart.IsZero() {
		e.state.ActiveMs = e.activeLocked().Milliseconds()
	}
}

func (e *Engine) saveFailed(err error) {
	if err != nil && e.saveErr == nil {
		e.saveErr = fmt.Errorf("save run state: %w", err)
		e.halting.Store(true)
		e.Log.Error().Err(err).Msg("cannot save the run state; stopping after the current steps")
	}
}

// checkpointEvery is how far the state document may lag behind the
// journal while a run goes on.
const checkpointEvery = time.Second

// checkpoints rewrites the state document from the journalled changes at
// most once every checkpointEvery, in the background, so the document
// people read stays current while a change costs only its journal line.
// The returned function stops it.
func (e *Engine) checkpoints() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			e.mu.Lock()
			if e.Journal.Dirty() && e.saveErr == nil {
				e.saveFailed(e.Journal.Checkpoint(e.state))
			}
			e.mu.Unlock()
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// prepareResume turns what a stopped orchestrator left running back into
// pending work: abandoned attempts count as interrupted, and an escalated
// step gets a fresh budget of retries and review cycles. It returns the
// sessions of the abandoned attempts.
func prepareResume(s *State) (abandoned []string) {
	for _, u := range s.Units {
		if u.Status == StatusRunning || u.Status == StatusEscalated || u.Status == StatusParked {
			u.Status, u.Parked = StatusPending, nil
		}
		for _, st := range u.Steps {
			for i := range st.Attempts {
				if st.Attempts[i].FinalState == "" {
					st.Attempts[i].FinalState = FinalInterrupted
					st.Attempts[i].Reason = abandonedReason
					if st.Attempts[i].Session != "" {
						abandoned = append(abandoned, st.Attempts[i].Session)
					}
				}
			}
			switch st.Status {
			case StatusEscalated:
				st.Status, st.BudgetFrom, st.VerifyFirst = StatusPending, len(st.Attempts), true
			case StatusRunning:
				st.Status = StatusPending
			}
		}
	}
	return abandoned
}

// closeAbandoned ends child sessions a stopped orchestrator left behind, so
// an abandoned agent cannot keep editing the project while its step reruns.
func (e *Engine) closeAbandoned(ctx context.Context, sessions []string) {
	for _, name := range sessions {
		if err := e.Steps.CloseSession(ctx, name); err != nil {
			e.Log.Debug().Err(err).Str("session", name).Msg("close abandoned session")
		}
	}
}

func (e *Engine) emit(ev Event) {
	if ev.At.IsZero() {
		ev.At = e.Clock.Now()
	}
	e.Report.Report(ev)
}
