package monitor

import (
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/lazyre"
	"github.com/story-automator/story-automator/sessionstate"
)

// ScreenDetector says from a captured screen whether the agent's turn is over.
type ScreenDetector func(screen string) bool

var screenDetectors = map[string]ScreenDetector{
	agent.ScreenTurnSummary: ClaudeTurnDone,
}

// DetectorFor returns the screen heuristic an agent profile names, or nil.
func DetectorFor(name string) ScreenDetector { return screenDetectors[name] }

// claudeTurnSummary is Claude Code's end-of-turn line, "✻ <Verb>ed for [1h ][2m ]3s":
// one word ending in -ed (any letters, "Sautéed" too) and a duration, then
// optionally a tail after "·" ("· done 4:23 AM", "· 1 shell still running")
// or, in a wide pane, a side panel's "│" and whatever it shows. The working
// line ("✶ Flibbertigibbeting… (13s · ↓ 2k tokens)") never matches: no "-ed for".
var claudeTurnSummary = lazyre.New(`^✻ \p{L}+ed for (?:\d+h )?(?:\d+m )?\d+s(?:$|\s+[·│])`)

// ClaudeTurnDone reports a finished Claude Code turn: a turn summary line,
// an input prompt below it, and no "esc to interrupt" (the working spinner) anywhere.
func ClaudeTurnDone(screen string) bool {
	lines := strings.Split(screen, "\n")
	summary := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.Contains(t, "esc to interrupt") {
			return false
		}
		if claudeTurnSummary().MatchString(t) {
			summary = i
		}
	}
	if summary < 0 {
		return false
	}
	for _, l := range lines[summary+1:] {
		if isPromptLine(l) {
			return true
		}
	}
	return false
}

// isPromptLine matches Claude Code's input line, bare or inside its box: "│ > │", "❯".
func isPromptLine(l string) bool {
	t := strings.TrimSpace(l)
	t = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(t, "│"), "│"))
	return t == ">" || t == "❯" || strings.HasPrefix(t, "> ") || strings.HasPrefix(t, "❯ ")
}

// IsDoneLine reports whether one line of output is the explicit done line (sessionstate.DoneLine),
// allowing the bullet an agent's UI may put in front of it.
func IsDoneLine(line string) bool {
	t := strings.TrimSpace(line)
	t = strings.TrimLeft(t, "⏺●•*·- ")
	return strings.TrimSpace(t) == sessionstate.DoneLine
}
