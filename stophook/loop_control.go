package stophook

import "strings"

// Control lines an agent writes on a line of its own to steer its loop (docs/loops.md).
var (
	completeLines = []string{"STORY_AUTOMATOR_COMPLETE", "FORGE_COMPLETE", "RALPH_COMPLETE"}
	pauseLines    = []string{"STORY_AUTOMATOR_PAUSE", "FORGE_PAUSE", "RALPH_PAUSE"}
)

const (
	promiseOpen  = "<promise>"
	promiseClose = "</promise>"
	// promiseMaxLines bounds how far a promise may span.
	promiseMaxLines = 20
)

// ControlSignals are the control lines found in one assistant message.
type ControlSignals struct {
	Complete string // the complete line seen, "" if none
	Pause    string // the pause line seen, "" if none
	// Promise is true when a <promise>…</promise> standing on its own lines
	// equals the completion promise after whitespace collapse.
	Promise bool
}

// ScanControl finds control lines in msg. A control word counts only alone on
// its line (surrounding whitespace allowed); a word inside a sentence, or any
// line inside a fenced code block (an agent quoting the protocol), does not.
// A promise must open at the start of a line and close at the end of one.
func ScanControl(msg, promise string) ControlSignals {
	var sig ControlSignals
	want := collapseSpace(promise)
	lines := strings.Split(msg, "\n")
	inFence := false
	for i := 0; i < len(lines); i++ {
		if isFence(lines[i]) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		t := strings.TrimSpace(lines[i])
		switch {
		case sig.Complete == "" && oneOf(t, completeLines):
			sig.Complete = t
		case sig.Pause == "" && oneOf(t, pauseLines):
			sig.Pause = t
		case want != "" && !sig.Promise && strings.HasPrefix(t, promiseOpen):
			text, ok := promiseText(lines[i:])
			sig.Promise = ok && text == want
		}
	}
	return sig
}

// promiseText reads a promise starting at lines[0]; ok is false when it does
// not close at the end of a line within promiseMaxLines.
func promiseText(lines []string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(lines) && i < promiseMaxLines; i++ {
		t := strings.TrimSpace(lines[i])
		if i == 0 {
			t = strings.TrimPrefix(t, promiseOpen)
		}
		if strings.HasSuffix(t, promiseClose) {
			b.WriteString(strings.TrimSuffix(t, promiseClose))
			inner := b.String()
			if strings.Contains(inner, promiseOpen) || strings.Contains(inner, promiseClose) {
				return "", false
			}
			return collapseSpace(inner), true
		}
		if strings.Contains(t, promiseClose) {
			return "", false // closes inside a longer line
		}
		b.WriteString(t)
		b.WriteByte(' ')
	}
	return "", false
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}
