package stophook

import (
	"strconv"
	"strings"
)

// FixPlanStatus counts the steps of a fix-plan checklist.
//
// A step is a markdown task-list item: `- [ ] text`, `* [x] text`, `1. [X] text`
// (any indentation). `[x]`/`[X]` is done. An open step may carry an attempts
// note `(attempts: N/M)`: N attempts used of M allowed; when N ≥ M (M > 0) the
// step is out of attempts. Whoever works the plan (the agent) updates the
// checkboxes and attempts notes; the hook only reads the file. Items inside
// fenced code blocks are not steps.
type FixPlanStatus struct {
	Steps     int
	Done      int
	Exhausted int
	Open      int
}

// ParseFixPlan reads a fix-plan checklist.
func ParseFixPlan(text string) FixPlanStatus {
	var st FixPlanStatus
	inFence := false
	for line := range strings.Lines(text) {
		if isFence(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		mark, text, ok := taskItem(strings.TrimRight(line, "\r\n"))
		if !ok {
			continue
		}
		st.Steps++
		switch {
		case mark != ' ':
			st.Done++
		case outOfAttempts(text):
			st.Exhausted++
		default:
			st.Open++
		}
	}
	return st
}

// The two parsers below are written out rather than regular expressions so
// that the hook, a process started at every stop, links no regexp package
// (fuzz_test.go checks them against the expressions they stand for).

// taskItem reads a task-list item, `^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*)$`
// (\s and \d in ASCII): its checkbox mark and its text.
func taskItem(line string) (mark byte, text string, ok bool) {
	s := trimSpaceLeft(line)
	if s != "" && strings.IndexByte("-*+", s[0]) >= 0 {
		s = s[1:]
	} else {
		n := digits(s)
		if n == 0 || n == len(s) || (s[n] != '.' && s[n] != ')') {
			return 0, "", false
		}
		s = s[n+1:]
	}
	t := trimSpaceLeft(s)
	if len(t) == len(s) || len(t) < 3 || t[0] != '[' || t[2] != ']' || strings.IndexByte(" xX", t[1]) < 0 {
		return 0, "", false
	}
	return t[1], trimSpaceLeft(t[3:]), true
}

// outOfAttempts reads the first attempts note in text,
// `(?i)\(attempts?:\s*(\d+)\s*/\s*(\d+)\s*\)`, and reports whether it says
// the attempts are used up.
func outOfAttempts(text string) bool {
	for i := strings.IndexByte(text, '('); i >= 0; {
		if used, allowed, ok := attemptsNote(text[i+1:]); ok {
			u, err1 := strconv.Atoi(used)
			a, err2 := strconv.Atoi(allowed)
			return err1 == nil && err2 == nil && a > 0 && u >= a
		}
		next := strings.IndexByte(text[i+1:], '(')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// attemptsNote reads `attempts?:\s*(\d+)\s*/\s*(\d+)\s*\)` (case folded as
// (?i) folds it) at the start of s.
func attemptsNote(s string) (used, allowed string, ok bool) {
	const word = "attempt"
	if len(s) < len(word) || !strings.EqualFold(s[:len(word)], word) {
		return "", "", false
	}
	s = s[len(word):]
	for _, plural := range []string{"s", "S", "\u017f"} { // ſ folds to s
		if rest, cut := strings.CutPrefix(s, plural); cut {
			s = rest
			break
		}
	}
	s, ok = strings.CutPrefix(s, ":")
	if !ok {
		return "", "", false
	}
	s = trimSpaceLeft(s)
	n := digits(s)
	used, s = s[:n], trimSpaceLeft(s[n:])
	if n == 0 || !strings.HasPrefix(s, "/") {
		return "", "", false
	}
	s = trimSpaceLeft(s[1:])
	n = digits(s)
	allowed, s = s[:n], trimSpaceLeft(s[n:])
	if n == 0 || !strings.HasPrefix(s, ")") {
		return "", "", false
	}
	return used, allowed, true
}

// trimSpaceLeft drops leading \s (ASCII space, \t, \n, \f, \r).
func trimSpaceLeft(s string) string { return strings.TrimLeft(s, " \t\n\f\r") }

// digits is the length of s's leading run of ASCII digits.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Finished reports whether the plan has steps and none is still open.
func (s FixPlanStatus) Finished() bool { return s.Steps > 0 && s.Open == 0 }

func isFence(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}
