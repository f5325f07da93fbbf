package monitor

import (
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux/child"
)

// ScreenDetector says from a captured screen whether the agent's turn is over.
type ScreenDetector func(screen string) bool

var screenDetectors = map[string]ScreenDetector{
	child.ScreenTurnSummary: ClaudeTurnDone,
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

// StripANSI removes terminal escape sequences (CSI, OSC and two-byte escapes).
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b {
			b.WriteByte(s[i])
			continue
		}
		i = skipEscape(s, i)
	}
	return b.String()
}

// skipEscape returns the index of the last byte of the escape at s[i].
func skipEscape(s string, i int) int {
	if i+1 >= len(s) {
		return i
	}
	switch s[i+1] {
	case '[':
		j := i + 2
		for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
			j++
		}
		return j
	case ']', 'P', '_', '^':
		for j := i + 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 1
			}
		}
		return len(s) - 1
	case '(', ')', '*', '+', '#', '%':
		// Character set and line attribute selections carry one more byte.
		if i+2 < len(s) {
			return i + 2
		}
		return len(s) - 1
	}
	return i + 1
}
