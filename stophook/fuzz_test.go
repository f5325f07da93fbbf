package stophook

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"a","stop_hook_active":true,"last_assistant_message":"done"}`,
		`{"hook_event_name":"SubagentStop"}`,
		`{"background_tasks":[{"status":"running"}]}`,
		`{"background_tasks":{"x":{"state":"pending"}}}`,
		``, `[]`, `{"stop_hook_active":"yes"}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInput(data)
		if err != nil {
			return
		}
		_ = in.HasRunningBackgroundTask()
		// Whatever the input, deciding against an owned marker must not panic
		// and a bystander must never be blocked.
		m := active()
		d := Decide(in, m, nil, env(), t0)
		if in.SessionID != m.OwnerSession && d.Output != nil {
			t.Fatalf("non-owner %q got output %+v", in.SessionID, d.Output)
		}
	})
}

// The fix-plan parsers read what the regular expressions they stand for
// match (refFixPlanItem, refFixPlanAttempts).
func FuzzFixPlanParsers(f *testing.F) {
	for _, s := range []string{"- [ ] step", "  12) [X]   done", "* [x]", "+  [ ] a (attempts: 3/3)",
		"1. [ ] b (Attempt:2 / 5 ) (attempts: 9/9)", "- [ ] (ATTEMPTſ: 1/1)", "-[ ] no space", "- [y] bad",
		"(attempts: 99999999999999999999/1) (attempts: 2/1)", "\t\f- [ ]\ttab", "x (attempts:\n1/1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		// ParseFixPlan gives taskItem one line, its line break cut off.
		if !strings.Contains(line, "\n") {
			mark, text, ok := taskItem(line)
			m := refFixPlanItem.FindStringSubmatch(line)
			if ok != (m != nil) || (ok && (string(mark) != m[1] || text != m[2])) {
				t.Fatalf("taskItem(%q) = %q %q %v; the expression: %q", line, mark, text, ok, m)
			}
		}
		if got, want := outOfAttempts(line), refOutOfAttempts(line); got != want {
			t.Fatalf("outOfAttempts(%q) = %v, the expression %v", line, got, want)
		}
	})
}

var (
	refFixPlanItem     = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*)$`)
	refFixPlanAttempts = regexp.MustCompile(`(?i)\(attempts?:\s*(\d+)\s*/\s*(\d+)\s*\)`)
)

func refOutOfAttempts(text string) bool {
	m := refFixPlanAttempts.FindStringSubmatch(text)
	if m == nil {
		return false
	}
	used, err1 := strconv.Atoi(m[1])
	allowed, err2 := strconv.Atoi(m[2])
	return err1 == nil && err2 == nil && allowed > 0 && used >= allowed
}
