package orchestrator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/monitor"
)

// A limited attempt (FinalLimited) never uses up its step's retries. A usage
// or rate limit makes its agent "limited" until the limit lifts: the step
// goes to its other agent at once when that one is free (onLimit fallback),
// else the whole run waits — no new child starts, a running one finishes its
// attempt and waits too — and goes on by itself at the reset. An API fault
// (overloaded, api_error) is transient: the step retries it after its backoff.
// Both are bounded by the run's max wait, counted from the first limit of a
// row, and escalate past it.

// CodeUsageLimit is the code of a step escalated on a limit: one that lifts
// later than the run may wait, or any limit under onLimit escalate.
const CodeUsageLimit = monitor.ReasonUsageLimit

// CodeAPIError is the code of a step escalated on API faults that outlasted
// the run's max wait.
const CodeAPIError = monitor.ReasonAPIError

// Bounds of a limit's wait.
const (
	// limitJitterMax is the most a wait goes on past a known reset, so runs
	// that met one limit do not all start again in the same second.
	limitJitterMax = 30 * time.Second
	// limitBackoffFirst is the wait after a limit with no reset time; it
	// doubles on each such limit in a row, up to limitBackoffMax.
	limitBackoffFirst = time.Minute
	limitBackoffMax   = 15 * time.Minute
	// waitSlice is the longest one timer of a wait runs before the wall
	// clock is read again: a machine that slept, or a clock that jumped,
	// ends the wait within this once the wall clock is past its end.
	waitSlice = time.Minute
)

// LimitWait is the run's wait for an agent's limit to lift. Times are RFC
// 3339 UTC, compared with the wall clock, so a wait survives a kill, a
// machine's sleep and a clock's jump.
type LimitWait struct {
	Since string `json:"since"`
	// Until is when the run goes on: the reset plus a little jitter, or the
	// end of a backoff when the reset is unknown.
	Until string `json:"until"`
	// ResetsAt is when the agent said its limit lifts ("" = it did not say).
	ResetsAt string `json:"resetsAt,omitempty"`
	Reason   string `json:"reason"`
	Agent    string `json:"agent"`
	// Unit and Step are where the limit was met.
	Unit string `json:"unit,omitempty"`
	Step string `json:"step,omitempty"`
}

// UntilTime is Until as a time (zero when unreadable).
func (w *LimitWait) UntilTime() time.Time {
	t, _ := marker.ParseTime(w.Until)
	return t
}

// Remaining is how long the wait has left at now (0 once it is over).
func (w *LimitWait) Remaining(now time.Time) time.Duration {
	return max(w.UntilTime().Sub(now.Round(0)), 0)
}

// AgentLimit is the last limit an agent met in the run.
type AgentLimit struct {
	Reason   string `json:"reason"`
	ResetsAt string `json:"resetsAt,omitempty"`
	// Until is when the agent may run again.
	Until string `json:"until"`
	// Since is when its row of limits began: the run's max wait counts from it.
	Since string `json:"since"`
	// Strikes counts its limits in a row without a reset time.
	Strikes int `json:"strikes,omitempty"`
}

// IsWaitLimit reports whether a limited attempt's reason is a limit the
// run waits out (a usage or rate limit), not a transient API fault.
func IsWaitLimit(reason string) bool {
	return reason != monitor.ReasonOverloaded && reason != monitor.ReasonAPIError
}

// IsAPIFault reports whether an attempt ended on a transient API fault.
func IsAPIFault(a Attempt) bool {
	return a.FinalState == FinalLimited && !IsWaitLimit(a.Reason)
}

// waitGate is a wait in progress: units that reach an attempt join it.
type waitGate struct {
	done chan struct{}
}

func parseWall(s string) time.Time {
	t, _ := marker.ParseTime(s)
	return t
}

// wallNow is the clock's time without its monotonic reading: every limit
// time is compared with the wall clock (see waitSlice).
func (e *Engine) wallNow() time.Time { return e.Clock.Now().Round(0) }

// EnvLimitJitter bounds the jitter a run adds to a limit's reset (a
// duration; default limitJitterMax, 0 = none): tests that wait out a real
// limit set it to 0.
const EnvLimitJitter = "STORY_AUTOMATOR_LIMIT_JITTER"

// jitterFrom is the jitter the environment asks for (nil: the default).
func jitterFrom(getenv func(string) string) func() time.Duration {
	if getenv == nil {
		return nil
	}
	d, err := time.ParseDuration(getenv(EnvLimitJitter))
	if err != nil || d < 0 {
		return nil
	}
	return func() time.Duration {
		if d == 0 {
			return 0
		}
		return rand.N(d) //nolint:gosec // G404: jitter spreads resumes; nothing depends on it being unguessable
	}
}

func (e *Engine) jitter() time.Duration {
	if e.Jitter != nil {
		return e.Jitter()
	}
	return rand.N(limitJitterMax) //nolint:gosec // G404: jitter, as above
}

func (e *Engine) onLimit() string {
	on, _ := e.Policy.LimitPolicy(e.state.Config)
	return on
}

func (e *Engine) maxWait() time.Duration {
	_, d := e.Policy.LimitPolicy(e.state.Config)
	return d
}

// LimitPolicy is what a run with cfg does when an agent meets a limit
// (onLimit, OnLimitFallback when unset) and the longest it waits for one
// to lift (--max-wait, else maxWait, else DefaultMaxWait).
func (p Policy) LimitPolicy(cfg RunConfig) (string, time.Duration) {
	on := p.OnLimit
	if on == "" {
		on = OnLimitFallback
	}
	if d, ok := cfg.MaxWait.Get(); ok && d > 0 {
		return on, d
	}
	if p.MaxWait > 0 {
		return on, p.MaxWait
	}
	return on, DefaultMaxWait
}

// agentLimit is the limit agent is under at now, or nil when it is free.
func (e *Engine) agentLimit(agent string, now time.Time) *AgentLimit {
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.state.Limited[agent]
	if l == nil || !now.Before(parseWall(l.Until)) {
		return nil
	}
	c := *l
	return &c
}

// noteLimit records that a's agent met a usage or rate limit, and until when
// it is limited: the reset plus jitter, or a doubling backoff when no reset
// time is known — or when the agent, limited again in a row, names a reset
// that has passed (its clock or the API's is off): going on at once would
// only meet the limit again, attempt after attempt.
func (e *Engine) noteLimit(u *Unit, a Attempt) {
	now := e.wallNow()
	e.updateUnit(nil, func(s *State) {
		if s.Limited == nil {
			s.Limited = map[string]*AgentLimit{}
		}
		l := s.Limited[a.Agent]
		again := l != nil
		if l == nil {
			l = &AgentLimit{Since: marker.Timestamp(now)}
			s.Limited[a.Agent] = l
		}
		l.Reason, l.ResetsAt = a.Reason, a.ResetsAt
		var until time.Time
		if reset := parseWall(a.ResetsAt); !reset.IsZero() && (reset.After(now) || !again) {
			l.Strikes = 0
			until = maxTime(reset, now).Add(e.jitter())
		} else {
			l.Strikes++
			until = now.Add(limitBackoff(l.Strikes))
		}
		l.Until = marker.Timestamp(until)
		s.addLog(now, u.Dotted, "", fmt.Sprintf("%s is limited (%s) until %s", a.Agent, a.Reason, humanTime(l.Until)))
	})
}

// clearLimit forgets an agent's limits once an attempt of it ran unlimited.
func (e *Engine) clearLimit(agent string) {
	if e.agentLimitRecorded(agent) {
		e.updateUnit(nil, func(s *State) { delete(s.Limited, agent) })
	}
}

func (e *Engine) agentLimitRecorded(agent string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state.Limited[agent] != nil
}

// limitBackoff is the wait after the n-th limit in a row with no reset time.
func limitBackoff(n int) time.Duration {
	d := limitBackoffFirst
	for i := 1; i < n && d < limitBackoffMax; i++ {
		d *= 2
	}
	return min(d, limitBackoffMax)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// restartLimitClocks makes a resumed run count the max wait of its agents'
// limits from now: resuming is the user's fresh word on how long to wait.
func restartLimitClocks(s *State, now time.Time) {
	for _, l := range s.Limited {
		l.Since = marker.Timestamp(now.Round(0))
	}
}

// otherAgent is the agent of agents that mv does not use, with its role.
func otherAgent(agents agentPair, role string) (string, string) {
	if role == RoleFallback {
		return agents.Primary, RolePrimary
	}
	return agents.Fallback, RoleFallback
}

// clearForAttempt holds the step's next attempt until no limit stands in
// its way: it joins a wait in progress, turns to the other agent when its
// own is limited (onLimit fallback), or waits for the limit to lift itself.
// It returns false with how the step ends when it must not go on.
func (e *Engine) clearForAttempt(ctx context.Context, u *Unit, st *StepState, mv *move, agents agentPair) (stepEnd, bool) {
	for {
		if !e.joinWait(ctx) {
			return e.stoppedEnd(ctx), false
		}
		now := e.wallNow()
		lim := e.agentLimit(mv.Agent, now)
		if lim == nil {
			return stepOK, true
		}
		other, role := otherAgent(agents, mv.Role)
		var otherLim *AgentLimit
		if other != "" && other != mv.Agent {
			otherLim = e.agentLimit(other, now)
		}
		switch {
		case e.onLimit() == OnLimitEscalate:
			e.escalateLimit(u, st, mv.Agent, lim, "onLimit is escalate in the workflow policy")
			return stepEscalated, false
		case e.onLimit() == OnLimitFallback && other != "" && other != mv.Agent && otherLim == nil:
			e.updateUnit(u, func(s *State) {
				s.addLog(now, u.Dotted, st.Name, fmt.Sprintf("%s is limited (%s); the fallback %s takes the step at once", mv.Agent, lim.Reason, other))
			})
			mv.Agent, mv.Role = other, role
			return stepOK, true
		case e.onLimit() == OnLimitFallback && otherLim != nil && parseWall(otherLim.Until).Before(parseWall(lim.Until)):
			// Both are limited: wait for the one that is free first.
			mv.Agent, mv.Role, lim = other, role, otherLim
		}
		if end, ok := e.checkWaitBounds(u, st, mv.Agent, lim, now); !ok {
			return end, false
		}
		w := LimitWait{Since: marker.Timestamp(now), Until: lim.Until, ResetsAt: lim.ResetsAt, Reason: lim.Reason,
			Agent: mv.Agent, Unit: u.Dotted, Step: st.Name}
		if !e.leadWait(ctx, w) {
			return e.stoppedEnd(ctx), false
		}
	}
}

// checkWaitBounds escalates a wait longer than the run's max wait, and
// pauses a run whose --max-duration the wait would pass.
func (e *Engine) checkWaitBounds(u *Unit, st *StepState, agent string, lim *AgentLimit, now time.Time) (stepEnd, bool) {
	until, since := parseWall(lim.Until), parseWall(lim.Since)
	if until.Sub(since) > e.maxWait()+limitJitterMax {
		e.escalateLimit(u, st, agent, lim, fmt.Sprintf("a wait until then is longer than the run's max wait (%s)", e.maxWait()))
		return stepEscalated, false
	}
	e.mu.Lock()
	limit, active := e.runLimits().MaxDuration, e.activeLocked()
	e.mu.Unlock()
	if limit > 0 && active+until.Sub(now) >= limit {
		e.pauseForBudget(u, st, fmt.Sprintf("the run's budget would be passed while it waits: %s is limited until %s, past --max-duration %s",
			agent, humanTime(lim.Until), limit), "raise the run's limit: story-automator run --resume --max-duration D")
		return stepEscalated, false
	}
	return stepOK, true
}

// escalateLimit escalates the step on its agent's limit with usage_limit,
// saying when the limit lifts.
func (e *Engine) escalateLimit(u *Unit, st *StepState, agent string, lim *AgentLimit, why string) {
	when := "an unknown time"
	if lim.ResetsAt != "" {
		when = humanTime(lim.ResetsAt)
	}
	reason := fmt.Sprintf("%s is limited (%s) until %s; %s", agent, lim.Reason, when, why)
	action := fmt.Sprintf("continue after the limit lifts (%s) with `story-automator run --resume`, or raise --max-wait", when)
	e.escalateWith(u, st, reason, CodeUsageLimit, action)
	e.updateUnit(nil, func(s *State) {
		if s.Escalation != nil && s.Escalation.Code == CodeUsageLimit {
			s.Escalation.ResetsAt = lim.ResetsAt
		}
	})
}

// stoppedEnd is how a step ends that stopped waiting without its wait's end.
func (e *Engine) stoppedEnd(ctx context.Context) stepEnd {
	if ctx.Err() != nil && !e.escalated.Load() {
		return stepInterrupted
	}
	return stepHalted
}
