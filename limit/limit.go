// Package limit reads, from what an agent CLI shows and records, that it gave up at a usage limit, rate limit or API fault: why, and when the limit lifts.
package limit

import (
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// Signal is a CLI that gave up: the reason (agent.LimitUsage, …) and when
// the limit lifts (zero when the CLI did not say).
type Signal struct {
	Reason   string
	ResetsAt time.Time
	// Source is what showed it: SourceHook, SourceScreen, SourceExit.
	Source string
}

// Sources of a signal.
const (
	SourceHook   = "hook"
	SourceScreen = "screen"
	SourceExit   = "exit"
)

// Where the CLI's words are read: when they were written (the base of a
// retry delay, and the day a bare time of day falls on or after) and the
// zone a time without one is in (the CLI writes in its process's zone,
// which a child shares with this tool).
type Where struct {
	At  time.Time
	Loc *time.Location
}

func (w Where) loc() *time.Location {
	if w.Loc == nil {
		return time.Local
	}
	return w.Loc
}

// FromScreen reads a live screen for the CLI's limit signs; a screen on
// which the CLI works on a turn (l.Busy) shows none of this turn.
func FromScreen(l agent.Limits, screen string, w Where) (Signal, bool) {
	if l.Busy != "" && strings.Contains(screen, l.Busy) {
		return Signal{}, false
	}
	return fromText(l, screen, false, SourceScreen, w)
}

// FromExit reads the last output of a child that exited non-zero.
func FromExit(l agent.Limits, output string, w Where) (Signal, bool) {
	return fromText(l, output, true, SourceExit, w)
}

func fromText(l agent.Limits, text string, onExit bool, source string, w Where) (Signal, bool) {
	flat := flatten(text)
	for _, s := range l.Signs {
		if s.OnExit != onExit || !hasAll(flat, s.Needles) {
			continue
		}
		return Signal{Reason: s.Reason, ResetsAt: resetOf(s, flat, w), Source: source}, true
	}
	return Signal{}, false
}

// FromHook reads what the CLI's limit hook recorded: the error it named
// decides whether it is a limit at all; the words it showed (any of the
// CLI's signs) and its record (the transcript) tell the kind and the reset.
func FromHook(l agent.Limits, apiError, message, transcript string, w Where) (Signal, bool) {
	reason, ok := l.HookErrors[apiError]
	if !ok {
		return Signal{}, false
	}
	sig := Signal{Reason: reason, Source: SourceHook}
	flat := flatten(message)
	for _, s := range l.Signs {
		if hasAll(flat, s.Needles) {
			sig.Reason, sig.ResetsAt = s.Reason, resetOf(s, flat, w)
			break
		}
	}
	if l.Record == agent.LimitRecordTranscript && transcript != "" {
		if rec, ok := FromTranscript(transcript); ok {
			if rec.Reason != "" {
				sig.Reason = rec.Reason
			}
			if !rec.ResetsAt.IsZero() {
				sig.ResetsAt = rec.ResetsAt
			}
		}
	}
	return sig, true
}

// resetOf reads the reset time that follows the sign's ResetAfter (for a
// time of day, the end of the minute it names).
func resetOf(s agent.LimitSign, flat string, w Where) time.Time {
	if s.ResetAfter == "" {
		return time.Time{}
	}
	i := strings.LastIndex(flat, s.ResetAfter)
	if i < 0 {
		return time.Time{}
	}
	rest := flat[i+len(s.ResetAfter):]
	switch s.Reset {
	case agent.ResetClock:
		// The CLIs show the reset to the minute, rounded down: the limit
		// lifts by the end of that minute, and a run that went on at its
		// start would meet it again.
		if t, ok := ParseClock(rest, w); ok {
			return t.Add(time.Minute)
		}
		return time.Time{}
	case agent.ResetDelay:
		t, _ := ParseDelay(rest, w)
		return t
	}
	return time.Time{}
}

// flatten joins a screen's lines into one, without the box borders and
// the runs of spaces a terminal puts in, so a sign that wraps still reads.
func flatten(text string) string {
	text = strings.NewReplacer("│", " ", "╭", " ", "╰", " ", "\r", " ", "\n", " ").Replace(text)
	return strings.Join(strings.Fields(text), " ")
}

func hasAll(text string, needles []string) bool {
	for _, n := range needles {
		if !strings.Contains(text, n) {
			return false
		}
	}
	return len(needles) > 0
}
