package stophook

import (
	"strings"
	"testing"
)

func TestScanControl(t *testing.T) {
	const promise = "ALL TESTS GREEN"
	cases := []struct {
		name string
		msg  string
		want ControlSignals
	}{
		{"nothing", "working on it", ControlSignals{}},
		{"complete alone", "STORY_AUTOMATOR_COMPLETE", ControlSignals{Complete: "STORY_AUTOMATOR_COMPLETE"}},
		{"complete with indentation and CRLF", "done\r\n\t FORGE_COMPLETE \r\n", ControlSignals{Complete: "FORGE_COMPLETE"}},
		{"complete in a sentence", "Say RALPH_COMPLETE when done", ControlSignals{}},
		{"complete with markdown is not bare", "**STORY_AUTOMATOR_COMPLETE**", ControlSignals{}},
		{"lower case does not count", "story_automator_complete", ControlSignals{}},
		{"pause", "x\nRALPH_PAUSE\ny", ControlSignals{Pause: "RALPH_PAUSE"}},
		{"fenced lines do not count", "~~~\nFORGE_PAUSE\n~~~\n```text\nFORGE_COMPLETE\n```", ControlSignals{}},
		{"after a fence closes lines count again", "```\nx\n```\nFORGE_COMPLETE", ControlSignals{Complete: "FORGE_COMPLETE"}},
		{"promise exact", "<promise>ALL TESTS GREEN</promise>", ControlSignals{Promise: true}},
		{"promise collapsed", "  <promise>\tALL   TESTS  GREEN\t</promise> ", ControlSignals{Promise: true}},
		{"promise over lines", "<promise>\nALL TESTS\n  GREEN\n</promise>", ControlSignals{Promise: true}},
		{"promise mismatch", "<promise>ALL TESTS RED</promise>", ControlSignals{}},
		{"promise with text after the close", "<promise>ALL TESTS GREEN</promise> (I think)", ControlSignals{}},
		{"promise with text before the open", "Result: <promise>ALL TESTS GREEN</promise>", ControlSignals{}},
		{"unclosed promise", "<promise>ALL TESTS GREEN", ControlSignals{}},
		{"second promise matches", "<promise>nope</promise>\n<promise>ALL TESTS GREEN</promise>", ControlSignals{Promise: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ScanControl(tc.msg, promise); got != tc.want {
				t.Fatalf("ScanControl(%q) = %+v, want %+v", tc.msg, got, tc.want)
			}
		})
	}
	if got := ScanControl("<promise></promise>", ""); got.Promise {
		t.Error("an empty promise must never match")
	}
}

// FuzzScanControl: never panics, and a control word that shares its line with
// other text never counts.
func FuzzScanControl(f *testing.F) {
	f.Add("done\nSTORY_AUTOMATOR_COMPLETE\n", "DONE")
	f.Add("<promise> DONE </promise>", "DONE")
	f.Add("```\nFORGE_PAUSE\n```", "")
	f.Fuzz(func(t *testing.T, msg, promise string) {
		got := ScanControl(msg, promise)
		if got.Complete != "" && !oneOf(got.Complete, completeLines) {
			t.Fatalf("complete %q is not a control word", got.Complete)
		}
		if got.Promise && collapseSpace(promise) == "" {
			t.Fatal("an empty promise matched")
		}
		if strings.Contains(msg, "\n") || strings.Contains(msg, "`") || strings.Contains(msg, "~") {
			return
		}
		if line := strings.TrimSpace(msg); !oneOf(line, completeLines) && got.Complete != "" {
			t.Fatalf("the one-line message %q completed the loop", msg)
		}
	})
}
