package stophook

import (
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// LoopFacts are what the shell learned for a loop before deciding: slow or
// file-reading facts, gathered outside the marker lock so Decide stays pure.
type LoopFacts struct {
	// TranscriptMessage is the last assistant text of the transcript; it is
	// used only when the hook input has no last_assistant_message.
	TranscriptMessage string
	// GitFingerprint identifies the repository state (HEAD, index and, for
	// the circuit_breaker strategy, the work tree); "" = unknown.
	GitFingerprint string
	// FixPlan is the fix-plan file's text; FixPlanErr says why it is missing.
	FixPlan    string
	FixPlanErr error
	// Advisor is the advisor's verdict; nil = not consulted.
	Advisor *AdvisorVerdict
}

// loopCheck is what Decide worked out before handing a loop to decideLoop.
type loopCheck struct {
	progress  bool // heartbeat or git fingerprint changed since the hook last looked
	maxBlocks int  // the circuit breaker's limit
}

// loopProgressed reports a change of the git fingerprint since the hook last
// looked. Together with the heartbeat it is a loop's progress: a loop iteration
// re-enters with stop_hook_active true, so without it the circuit breaker would
// release every loop after MaxBlocks iterations however much work they did.
// An unknown fingerprint on either side is not progress.
func loopProgressed(m *marker.Marker, env Env) bool {
	if !m.IsLoop() || env.Loop.GitFingerprint == "" || m.Loop.GitFingerprint == "" {
		return false
	}
	return env.Loop.GitFingerprint != m.Loop.GitFingerprint
}

// loopMessage is the last assistant message: the input's field, or the
// transcript's last assistant text when the field is absent.
func loopMessage(in Input, env Env) string {
	if in.LastAssistantMessage != nil {
		return *in.LastAssistantMessage
	}
	return env.Loop.TranscriptMessage
}

// loopControlLine reports whether the last assistant message of a loop's
// owner carries a control line: complete, pause or the matching promise.
func loopControlLine(in Input, m *marker.Marker, env Env) bool {
	if !m.IsLoop() {
		return false
	}
	sig := ScanControl(loopMessage(in, env), m.Loop.CompletionPromise)
	return sig.Complete != "" || sig.Pause != "" || sig.Promise
}

// decideLoop decides for the owner of a loop-mode marker once the owner gate,
// the stale check and the background-task check have passed (a control line
// passes the background-task check too), in the order docs/loops.md gives:
// control lines, the iteration limit, the advisor, the exit strategy, else
// continue. m is the marker as read; next carries the updated counters.
func decideLoop(in Input, m, next *marker.Marker, env Env, now time.Time, c loopCheck) Decision {
	if next.Loop == nil {
		return Decision{Reason: "loop marker without loop state"}
	}
	l := next.Loop
	msg := loopMessage(in, env)
	prevLen := l.LastResponseLength
	l.LastResponseLength = len(msg)
	if env.Loop.GitFingerprint != "" {
		l.GitFingerprint = env.Loop.GitFingerprint
	}
	if c.progress {
		l.NoProgressIterations = 0
	} else {
		l.NoProgressIterations++
	}
	if l.MaxIterations <= 0 {
		l.MaxIterations = marker.DefaultMaxIterations // never unlimited
	}
	sig := ScanControl(msg, l.CompletionPromise)
	switch {
	case sig.Pause != "":
		return pauseLoop(m, next, now, KindPaused, sig.Pause+" control line: the agent asked for a human",
			fmt.Sprintf("story-automator loop paused by %s at iteration %d/%d. Resume with `story-automator loop resume`, end it with `story-automator loop cancel`.", sig.Pause, l.Iteration, l.MaxIterations))
	case sig.Complete != "":
		return endLoop(next, now, KindComplete, sig.Complete+" control line",
			fmt.Sprintf("story-automator loop complete (%s) after %d iteration(s).", sig.Complete, l.Iteration))
	case sig.Promise:
		return endLoop(next, now, KindComplete, "completion promise fulfilled",
			fmt.Sprintf("story-automator loop complete: <promise>%s</promise> after %d iteration(s).", l.CompletionPromise, l.Iteration))
	}
	if l.Iteration >= l.MaxIterations {
		return endLoop(next, now, KindMaxIterations, fmt.Sprintf("iteration limit %d reached", l.MaxIterations),
			fmt.Sprintf("story-automator loop stopped: iteration limit %d reached. Start a new loop to go on.", l.MaxIterations))
	}
	strategy := func() (Decision, bool) { return applyExitStrategy(m, next, msg, prevLen, env, now) }
	if l.Advisor != "" {
		return decideAdvisor(m, next, env, now, c, strategy)
	}
	if d, fired := strategy(); fired {
		return d
	}
	return continueLoop(next, now, c, l.Prompt, fmt.Sprintf("loop continues: iteration %d/%d", l.Iteration+1, l.MaxIterations))
}

// continueLoop blocks with prompt as the next instruction, unless the circuit
// breaker has seen too many blocks without progress.
func continueLoop(next *marker.Marker, now time.Time, c loopCheck, prompt, why string) Decision {
	l := next.Loop
	if next.StopHookBlocks >= c.maxBlocks {
		next.StopHookBlocks = 0
		why := fmt.Sprintf("circuit breaker: %d consecutive Stop blocks without progress", c.maxBlocks)
		return withLast(next, now, KindBreakerOpen, why, &Output{SystemMessage: "story-automator " + why +
			" (no new commit or staged change, no heartbeat); releasing this stop so the session is not trapped. The loop stays active at iteration " +
			fmt.Sprintf("%d/%d", l.Iteration, l.MaxIterations) + "; end it with `story-automator loop cancel`."})
	}
	l.Iteration++
	return withLast(next, now, KindContinue, why, &Output{Decision: "block", Reason: prompt, SystemMessage: iterationNotice(l)})
}

// iterationNotice tells the agent where the loop is and how to end it.
func iterationNotice(l *marker.LoopState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "story-automator loop: iteration %d/%d.", l.Iteration, l.MaxIterations)
	if l.CompletionPromise != "" {
		fmt.Fprintf(&b, " When it is true, put <promise>%s</promise> on a line of its own to finish;", l.CompletionPromise)
	} else {
		b.WriteString(" To finish, put STORY_AUTOMATOR_COMPLETE on a line of its own;")
	}
	b.WriteString(" STORY_AUTOMATOR_PAUSE on a line of its own asks for a human. `story-automator loop cancel` ends the loop.")
	return b.String()
}

// endLoop ends the loop: the stop goes through and the marker is removed.
func endLoop(next *marker.Marker, now time.Time, kind, why, notice string) Decision {
	d := withLast(next, now, kind, why, &Output{SystemMessage: notice})
	d.Remove = true
	return d
}

// pauseLoop lets the session stop and keeps the loop, paused, for a human.
// An allowed stop is not a block, so the block count stays as it was.
func pauseLoop(m, next *marker.Marker, now time.Time, kind, why, notice string) Decision {
	next.StopHookBlocks = m.StopHookBlocks
	next.Pause(why)
	return withLast(next, now, kind, why, &Output{SystemMessage: notice})
}

// releaseLoop lets the session stop and keeps the loop active: the next stop
// asks again (escalations to the human).
func releaseLoop(m, next *marker.Marker, now time.Time, kind, why, notice string) Decision {
	next.StopHookBlocks = m.StopHookBlocks
	return withLast(next, now, kind, why, &Output{SystemMessage: notice})
}
