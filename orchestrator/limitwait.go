package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/marker"
)

// joinWait blocks while the run waits on a limit; it returns false when the
// run stops instead of going on (interrupted, escalated, paused).
func (e *Engine) joinWait(ctx context.Context) bool {
	e.mu.Lock()
	g := e.gate
	e.mu.Unlock()
	if g != nil {
		testHookWaitJoined()
		select {
		case <-g.done:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil && !e.halting.Load()
}

// testHookWaitJoined runs when a unit joins a wait in progress.
var testHookWaitJoined = func() {}

// leadWait makes the whole run wait w out: recorded in the state document
// and the marker, announced with limit_wait, ended by the clock at w.Until
// with limit_resumed. A wait already in progress is joined instead. It
// returns false when the run stops before the wait's end: interrupted, a
// step escalated or reached a budget, or the marker was paused by hand —
// then the wait stays recorded, for `run --resume` to wait out what is left.
func (e *Engine) leadWait(ctx context.Context, w LimitWait) bool {
	e.mu.Lock()
	if e.gate != nil {
		e.mu.Unlock()
		return e.joinWait(ctx)
	}
	g := &waitGate{done: make(chan struct{})}
	e.gate = g
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.gate = nil
		e.mu.Unlock()
		close(g.done)
	}()
	e.beginWait(w)
	if !e.sleepUntil(ctx, w.UntilTime()) {
		e.markMarkerWaiting(nil)
		return false
	}
	e.endWait(w)
	return true
}

// beginWait records and announces the wait.
func (e *Engine) beginWait(w LimitWait) {
	now := e.wallNow()
	e.updateUnit(nil, func(s *State) {
		s.Wait, s.Status = &w, RunWaiting
		s.addLog(now, w.Unit, w.Step, fmt.Sprintf("the run waits: %s is limited (%s); it goes on by itself at %s",
			w.Agent, w.Reason, humanTime(w.Until)))
	})
	e.markMarkerWaiting(&w)
	e.emit(Event{Kind: EventLimitWait, Unit: w.Unit, Step: w.Step, Agent: w.Agent, Reason: w.Reason, ResetsAt: w.ResetsAt,
		Wait:    w.Remaining(now).Round(time.Second).String(),
		Message: fmt.Sprintf("%s met a limit (%s); the run goes on by itself at %s", w.Agent, w.Reason, humanTime(w.Until))})
}

// endWait records and announces the wait's end.
func (e *Engine) endWait(w LimitWait) {
	now := e.wallNow()
	e.updateUnit(nil, func(s *State) {
		s.Wait, s.Status = nil, RunRunning
		s.addLog(now, w.Unit, w.Step, fmt.Sprintf("the wait for %s's limit is over; the run goes on", w.Agent))
	})
	e.markMarkerWaiting(nil)
	e.emit(Event{Kind: EventLimitResumed, Unit: w.Unit, Step: w.Step, Agent: w.Agent, Reason: w.Reason, ResetsAt: w.ResetsAt,
		Message: fmt.Sprintf("the wait for %s's limit is over; the run goes on", w.Agent)})
}

// sleepUntil sleeps on the run's clock until the wall clock reaches until,
// in slices of at most waitSlice, so a machine that slept through the end,
// or a clock that jumped past it, goes on at once. It returns false when
// the run stops first: ctx ends, the run halts, or the marker is paused by
// hand (a marker change wakes the wait at once).
func (e *Engine) sleepUntil(ctx context.Context, until time.Time) bool {
	wctx, stop := e.watchMarker(ctx)
	defer stop()
	for {
		if ctx.Err() != nil || e.halting.Load() || e.markerPausedByHand() {
			return false
		}
		left := until.Sub(e.wallNow())
		if left <= 0 {
			return true
		}
		if err := e.Clock.Sleep(wctx, min(left, waitSlice)); err != nil && ctx.Err() != nil {
			return false
		}
	}
}

// watchMarker returns a context that ends with ctx, or when the marker's
// folder changes (someone paused the run): the wait then looks again.
func (e *Engine) watchMarker(ctx context.Context) (context.Context, func()) {
	wctx, cancel := context.WithCancel(ctx)
	if e.Marker == nil {
		return wctx, cancel
	}
	w := wake.New()
	if err := w.Dir(filepath.Dir(e.Marker.Path), filepath.Base(e.Marker.Path)); err != nil {
		w.Close()
		return wctx, cancel
	}
	go func() {
		defer w.Close()
		for {
			select {
			case <-wctx.Done():
				return
			case <-w.C:
				if e.markerPausedByHand() {
					cancel()
					return
				}
			}
		}
	}()
	return wctx, cancel
}

// markerPausedByHand reports, and records, that the run's marker was paused
// by someone else than the run: a limit's end never resumes such a run.
func (e *Engine) markerPausedByHand() bool {
	if e.Marker == nil || e.escalated.Load() {
		return false
	}
	m, err := e.Marker.Read()
	if err != nil || !isRunsMarker(m, e.state.RunID) || m.Status != marker.StatusPaused {
		return false
	}
	if !e.pausedByHand.Swap(true) {
		e.halting.Store(true)
		now := e.Clock.Now()
		e.updateUnit(nil, func(s *State) {
			s.addLog(now, "", "", "the marker was paused by hand during a limit's wait; the run stops and is not resumed by the limit's end")
		})
	}
	return true
}

// markMarkerWaiting records the wait in the marker (nil: no wait), so the
// Stop hook and `status` see a live run that waits.
func (e *Engine) markMarkerWaiting(w *LimitWait) {
	if e.Marker == nil {
		return
	}
	_, err := e.Marker.Modify(context.Background(), func(m *marker.Marker) error {
		if !isRunsMarker(m, e.state.RunID) {
			return errNotRunsMarker
		}
		m.Waiting = nil
		if w != nil {
			m.Waiting = &marker.Waiting{Reason: w.Reason, Agent: w.Agent, ResetsAt: w.ResetsAt, ResumesAt: w.Until, Since: w.Since}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNotRunsMarker) {
		e.Log.Warn().Err(err).Msg("limit wait: cannot update the marker")
	}
}

// resumeWait waits out what is left of a wait the run was stopped in (a
// kill, a pause): nothing when its end passed meanwhile (the machine slept
// through it). It returns false when the run stops before the end.
func (e *Engine) resumeWait(ctx context.Context) bool {
	e.mu.Lock()
	w := e.state.Wait
	e.mu.Unlock()
	if w == nil {
		return true
	}
	now := e.wallNow()
	if !now.Before(w.UntilTime()) {
		e.updateUnit(nil, func(s *State) {
			s.Wait = nil
			s.addLog(now, w.Unit, w.Step, fmt.Sprintf("the wait for %s's limit ended at %s while the run was stopped; going on at once",
				w.Agent, humanTime(w.Until)))
		})
		e.emit(Event{Kind: EventLimitResumed, Unit: w.Unit, Step: w.Step, Agent: w.Agent, Reason: w.Reason, ResetsAt: w.ResetsAt})
		return true
	}
	return e.leadWait(ctx, *w)
}

// afterAPIFault waits the step's backoff after a transient API fault (no
// retry is used), or escalates when the faults in a row outlast the run's
// max wait.
func (e *Engine) afterAPIFault(ctx context.Context, u *Unit, st *StepState, sp StepPolicy) (stepEnd, bool) {
	n, first := st.faultStreak()
	now := e.wallNow()
	if now.Sub(first) > e.maxWait() {
		e.escalateWith(u, st, fmt.Sprintf("the agent's API kept failing for %s (%d faults in a row)", now.Sub(first).Round(time.Second), n),
			CodeAPIError, "check the agent's API status, then `story-automator run --resume`")
		return stepEscalated, false
	}
	d := e.Policy.backoff(sp, n)
	if d <= 0 {
		return stepOK, true
	}
	e.emit(Event{Kind: EventBackoff, Unit: u.Dotted, Step: st.Name, Wait: d.String(), Reason: "api fault"})
	if e.Clock.Sleep(ctx, d) != nil {
		return stepInterrupted, false
	}
	return stepOK, true
}

// faultStreak counts the step's last attempts that ended on API faults, in
// a row since its budget began (a resumed escalation starts afresh), and
// when the first of them started.
func (st *StepState) faultStreak() (int, time.Time) {
	n := 0
	var first time.Time
	for i := len(st.Attempts) - 1; i >= st.BudgetFrom && IsAPIFault(st.Attempts[i]); i-- {
		n++
		first = parseWall(st.Attempts[i].StartedAt)
	}
	return n, first
}
