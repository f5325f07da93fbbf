package stophook

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

// Environment variables the hook reads.
const (
	EnvChild       = sessionstate.EnvChild
	EnvSession     = sessionstate.EnvSession
	EnvMaxBlocks   = "STORY_AUTOMATOR_MAX_STOP_BLOCKS"
	EnvStaleAfter  = "STORY_AUTOMATOR_STALE_AFTER"
	DefaultMax     = 5
	maxAllowedCap  = 100
	DefaultStale   = 30 * time.Minute
	hookEventSubag = "SubagentStop"
)

// History decision names (docs/loops.md).
const (
	KindBlock           = "block"
	KindContinue        = "continue"
	KindComplete        = "complete"
	KindSatisfied       = "satisfied"
	KindPaused          = "paused"
	KindMaxIterations   = "max-iterations"
	KindBreakerOpen     = "breaker-open"
	KindReleaseStale    = "release-stale"
	KindAllowBackground = "allow-background"
	KindEscalateLow     = "escalate-low-confidence"
	KindEscalateAdvisor = "escalate-advisor-error"
	KindFailOpen        = "fail-open"
)

// Env is the part of the process environment Decide depends on.
type Env struct {
	Child        bool
	ChildSession string
	MaxBlocks    int
	StaleAfter   time.Duration
	// ProcessAlive reports whether a pid exists; injected for tests.
	ProcessAlive func(pid int) bool
	// ProcessStart returns when a pid started (see proc.Start);
	// nil or !ok: not compared.
	ProcessStart func(pid int) (uint64, bool)
	// LockHeld reports whether a lock file is held (see proc.LockHeld).
	LockHeld func(path string) bool
	// Loop holds the facts the shell gathered for a loop-mode marker.
	Loop LoopFacts
}

// EnvFrom reads Env from getenv. Invalid numbers fall back to the defaults.
func EnvFrom(getenv func(string) string) Env {
	e := Env{
		Child:        strings.EqualFold(strings.TrimSpace(getenv(EnvChild)), "true") || getenv(EnvChild) == "1",
		ChildSession: strings.TrimSpace(getenv(EnvSession)),
		MaxBlocks:    DefaultMax,
		StaleAfter:   DefaultStale,
		ProcessAlive: proc.Alive,
		ProcessStart: proc.Start,
		LockHeld:     proc.LockHeld,
	}
	if n, err := strconv.Atoi(strings.TrimSpace(getenv(EnvMaxBlocks))); err == nil && n >= 1 && n <= maxAllowedCap {
		e.MaxBlocks = n
	}
	if d, err := time.ParseDuration(strings.TrimSpace(getenv(EnvStaleAfter))); err == nil && d > 0 {
		e.StaleAfter = d
	}
	return e
}

// Output is the one JSON object the hook may print.
type Output struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

// Decision is what Decide concluded and what the shell must do about it.
type Decision struct {
	// Kind is the history name of an owner decision; "" for decisions that
	// touch nothing (child, subagent, no marker, bystander).
	Kind   string
	Reason string
	// Output is printed; nil means print nothing and let the stop proceed.
	Output *Output
	// Next is the marker to persist before acting; nil means write nothing.
	Next *marker.Marker
	// Remove deletes the marker (a loop that ended).
	Remove bool
	// StampChild asks the shell to record the child's turn completion.
	StampChild bool
	// StampLimit asks the shell to record that the child's turn ended in
	// an API error (its agent's limit event), not a completion.
	StampLimit bool
	// ConsultAdvisor asks the shell to run the loop's advisor (outside the
	// lock) and finish this decision with its verdict (Advised): the gates
	// before the advisor are not gone through again.
	ConsultAdvisor bool
	// advised finishes a decision that asked for the advisor.
	advised func(*AdvisorVerdict) Decision
}

// Advised is the decision the advisor's verdict v completes, when d asked
// for it (ConsultAdvisor); else d itself.
func (d Decision) Advised(v *AdvisorVerdict) Decision {
	if !d.ConsultAdvisor || d.advised == nil {
		return d
	}
	return d.advised(v)
}

// Blocks reports whether the decision keeps the session working.
func (d Decision) Blocks() bool { return d.Output != nil && d.Output.Decision == "block" }

// Decide applies the Stop hook's order (docs/reference.md). m and readErr are the result of reading the
// marker; Decide never performs I/O.
func Decide(in Input, m *marker.Marker, readErr error, env Env, now time.Time) Decision {
	if env.Child {
		// A subagent finishing inside a child is not the end of the child's turn.
		stamp := env.ChildSession != "" && !in.subagentStop()
		if agent.IsLimitEvent(in.HookEventName) {
			return Decision{StampLimit: env.ChildSession != "", Reason: "child session: its turn ended in an API error"}
		}
		return Decision{StampChild: stamp, Reason: "child session"}
	}
	if why := notOwnerStop(in, m, readErr, env); why != "" {
		return Decision{Reason: why}
	}
	if m.OwnerSession == "" && m.ClaimOnStop && in.SessionID != "" {
		// Made inside a session that did not say its id: the first session
		// to stop is that one (it started the run from its shell tool), and
		// from now on the only one held. Every decision below writes m.
		m = m.Clone()
		m.OwnerSession, m.ClaimOnStop = in.SessionID, false
	}
	if why, dead := orchestratorDead(m, env, now); dead {
		return ownerDecision(m, now, KindReleaseStale, why, &Output{SystemMessage: "story-automator: " + why + "; letting this session stop. Resume with `story-automator run --resume` or remove the marker with `story-automator marker remove`."})
	}
	// A loop's control line ends or pauses it and lets the stop through
	// anyway, so a running background task must not swallow it.
	if in.HasRunningBackgroundTask() && !loopControlLine(in, m, env) {
		return ownerDecision(m, now, KindAllowBackground, "a background task is running; the session will be woken when it ends", nil)
	}
	next := m.Clone()
	progress := progressed(m) || loopProgressed(m, env)
	waiting := m.Mode == marker.ModeStory && waitingOn(m, env, now)
	switch {
	case progress || (in.StopHookActive != nil && !*in.StopHookActive):
		next.StopHookBlocks = 0
	case waiting:
		// A run waiting out a limit is alive and makes no progress by
		// design, until a known time: its wait is no breaker's business.
	default:
		next.StopHookBlocks++
	}
	next.StopHookSeenHeartbeat = m.Heartbeat
	seen := m.StoriesRemaining
	next.StopHookSeenRemaining = &seen
	max := env.MaxBlocks
	if max <= 0 {
		max = DefaultMax
	}
	if m.Mode == marker.ModeLoop {
		// A loop's own ends (control lines, iteration limit, advisor, exit
		// strategy) let the session stop anyway, so they come first; the
		// breaker only ever turns a loop's block into a release.
		return decideLoop(in, m, next, env, now, loopCheck{progress: progress, maxBlocks: max})
	}
	if next.StopHookBlocks >= max {
		next.StopHookBlocks = 0
		why := fmt.Sprintf("circuit breaker: %d consecutive Stop blocks without progress", max)
		return withLast(next, now, KindBreakerOpen, why, &Output{SystemMessage: "story-automator " + why + " (no heartbeat, no story finished); releasing this stop so the session is not trapped. Check the run with `story-automator status`."})
	}
	background := !in.fromCodex() && in.HookEventName != HookAfterAgent
	if waiting {
		reason := waitingBlockReason(m, background, now)
		return withLast(next, now, KindBlock, "story run waiting for a limit to lift", &Output{Decision: "block", Reason: reason})
	}
	reason := storyBlockReason(m, background)
	return withLast(next, now, KindBlock, "story run in progress", &Output{Decision: "block", Reason: reason})
}

// notOwnerStop is the gate at the head of the Stop hook's order: it says why this stop is
// none of the hook's business (a child, a subagent, no active marker, a
// bystander), or "" for a stop of the marker's owner. Only an owner's stop
// can change the marker, so the shell applies the same gate before it takes
// the lock or gathers anything.
func notOwnerStop(in Input, m *marker.Marker, readErr error, env Env) string {
	switch {
	case env.Child:
		return "child session"
	case in.subagentStop():
		return "subagent stop"
	case unknownVersion(m, readErr):
		return fmt.Sprintf("marker version %d is not one this hook knows", m.Version)
	case noActiveMarker(m, readErr):
		return "no active marker"
	case m.OwnerSession != "" && in.SessionID != m.OwnerSession:
		return "bystander session"
	}
	return ""
}

// noActiveMarker reports whether there is no marker to guard (none, an
// unreadable one, or one no longer active): every stop then proceeds.
func noActiveMarker(m *marker.Marker, readErr error) bool {
	return readErr != nil || m == nil || !m.Active()
}

// unknownVersion reports whether the marker was written in a format this
// hook does not know (a newer tool's): it guards nothing it cannot read.
func unknownVersion(m *marker.Marker, readErr error) bool {
	return readErr == nil && m != nil && m.Version != marker.SchemaVersion
}

// progressed reports verified progress since the hook last looked.
func progressed(m *marker.Marker) bool {
	if m.Heartbeat != m.StopHookSeenHeartbeat {
		return true
	}
	return m.StopHookSeenRemaining != nil && m.StoriesRemaining < *m.StopHookSeenRemaining
}

func orchestratorDead(m *marker.Marker, env Env, now time.Time) (string, bool) {
	// The owner's lock is the truth (one flock try, no waiting); a pid is
	// only a hint, which a reused pid would fool without its start time.
	if m.OwnerLock != "" && env.LockHeld != nil {
		if !env.LockHeld(m.OwnerLock) {
			return fmt.Sprintf("the run's orchestrator is gone (its run lock %s is free)", m.OwnerLock), true
		}
		return "", false
	}
	if m.OwnerPid > 0 && env.ProcessAlive != nil && !env.ProcessAlive(m.OwnerPid) {
		return fmt.Sprintf("the run's orchestrator (pid %d) is gone", m.OwnerPid), true
	}
	if m.OwnerPid > 0 && m.OwnerPidStart != 0 && env.ProcessStart != nil {
		if start, ok := env.ProcessStart(m.OwnerPid); ok && start != m.OwnerPidStart {
			return fmt.Sprintf("the run's orchestrator (pid %d) is gone; that pid now names another process", m.OwnerPid), true
		}
	}
	if m.OwnerSession != "" || waitingOn(m, env, now) {
		return "", false
	}
	last, ok := marker.ParseTime(m.Heartbeat)
	if !ok {
		last, ok = marker.ParseTime(m.CreatedAt)
	}
	// A prompt loop rarely gets heartbeats: its hook's own last decision
	// shows it alive, so a long unowned loop is not mistaken for a dead run.
	if m.Mode == marker.ModeLoop && m.LastDecision != nil {
		if at, ok2 := marker.ParseTime(m.LastDecision.At); ok2 && (!ok || at.After(last)) {
			last, ok = at, true
		}
	}
	if ok && env.StaleAfter > 0 && now.Sub(last) > env.StaleAfter {
		return fmt.Sprintf("the run's orchestrator looks dead (no heartbeat for %s)", now.Sub(last).Round(time.Second)), true
	}
	return "", false
}

// ownerDecision records an owner decision that leaves the counters alone.
func ownerDecision(m *marker.Marker, now time.Time, kind, why string, out *Output) Decision {
	return withLast(m.Clone(), now, kind, why, out)
}

func withLast(next *marker.Marker, now time.Time, kind, why string, out *Output) Decision {
	next.LastDecision = &marker.LastDecision{At: marker.Timestamp(now), Decision: kind, Reason: why}
	return Decision{Kind: kind, Reason: why, Output: out, Next: next}
}

// storyBlockReason is one short paragraph that ends in exactly one command
// to run next: for a headless run (a `run` process owns the marker: ownerPid)
// a wait, since that process drives every step itself; for a run this
// session drives, the next primitive. A Claude Code session (background
// tasks wake it when they end) is told to wait as a background task and end
// its turn, so it spends no turn while the run works; others get the wait
// bounded under their shell tool's time limit.
func storyBlockReason(m *marker.Marker, backgroundTasks bool) string {
	var b strings.Builder
	where := []string{}
	if m.Epic != "" {
		where = append(where, "epic "+m.Epic)
	}
	if m.CurrentStory != "" {
		where = append(where, "story "+m.CurrentStory)
	}
	if m.CurrentStep != "" {
		where = append(where, "step "+m.CurrentStep)
	}
	at := ""
	if len(where) > 0 {
		at = " (" + strings.Join(where, ", ") + ")"
	}
	owner := "this session owns it"
	if m.OwnerSession == "" {
		owner = "its marker names no owner, so every session of this project is held (`story-automator marker claim` makes one the owner)"
	}
	if m.OwnerPid > 0 {
		fmt.Fprintf(&b, "A headless story-automator run (pid %d) is working%s with %d stories remaining, and %s. "+
			"It drives every step and heartbeat itself: do not start sessions or poll tmux. ",
			m.OwnerPid, at, m.StoriesRemaining, owner)
		if backgroundTasks {
			b.WriteString("Run next, as a background task (Bash run_in_background), then end your turn — you are woken when it returns: " +
				"`story-automator status --wait --return-after 0` (it returns when the run ends, escalates or pauses).")
		} else {
			b.WriteString("Run next: `story-automator status --wait` (it blocks until the run ends, escalates or pauses, at most 100s; run it again while it says running).")
		}
		return b.String()
	}
	fmt.Fprintf(&b, "A story-automation run driven by this session is in progress%s with %d stories remaining, and %s. "+
		"Run next: `story-automator monitor-session <the running child's session>` — ONE blocking call, again only if it returns finalState \"running\"; never poll tmux turn by turn; "+
		"record each verified step with `story-automator marker heartbeat --story <key> --step <step>`, and if you cannot go on, `story-automator marker pause --reason \"...\"`.",
		at, m.StoriesRemaining, owner)
	return b.String()
}
