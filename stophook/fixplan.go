package stophook

import (
	"strconv"
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
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

// The patterns compile on first use: every hook call starts a process, and
// only fix_plan loops need them.
var (
	fixPlanItem     = lazyre.New(`^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*)$`)
	fixPlanAttempts = lazyre.New(`(?i)\(attempts?:\s*(\d+)\s*/\s*(\d+)\s*\)`)
)

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
		m := fixPlanItem().FindStringSubmatch(strings.TrimRight(line, "\r\n"))
		if m == nil {
			continue
		}
		st.Steps++
		switch {
		case m[1] != " ":
			st.Done++
		case outOfAttempts(m[2]):
			st.Exhausted++
		default:
			st.Open++
		}
	}
	return st
}

func outOfAttempts(text string) bool {
	m := fixPlanAttempts().FindStringSubmatch(text)
	if m == nil {
		return false
	}
	used, err1 := strconv.Atoi(m[1])
	allowed, err2 := strconv.Atoi(m[2])
	return err1 == nil && err2 == nil && allowed > 0 && used >= allowed
}

// Finished reports whether the plan has steps and none is still open.
func (s FixPlanStatus) Finished() bool { return s.Steps > 0 && s.Open == 0 }

func isFence(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}
