package workflows

import (
	"strings"
	"testing"
)

// An item appended to any deferred-work.md that reads reads back as it was
// written (each line trimmed), after every item that was there, unchanged:
// no value (a fence, a comment, a key-like line) breaks the file.
func FuzzDeferredWorkAppend(f *testing.F) {
	f.Add("", "A finding", "its evidence", "a.go:1", "high")
	f.Add("- source_spec: `x`\n  summary: one\n  evidence: e\n", "Two: with a colon # and a hash", "```go\nx := 1\n```", "", "low (unverified)")
	f.Add("# Deferred\n<!-- note -->\n- [x] a bullet\n  wrapped", "<!-- not a comment", "  summary: not a key\n\nsecond paragraph", "b.go:2", "")
	f.Add("- source_spec: `y`\n  summary: s\n  done: abc", "x", "evidence: |\n  - item\n- top", "c", "medium")
	f.Fuzz(func(t *testing.T, text, summary, evidence, location, severity string) {
		before, err := parseDeferredWork("deferred-work.md", "/p", text)
		if err != nil {
			return
		}
		e := DeferredEntry{SourceSpec: "spec-1-1-a.md", Summary: strings.TrimSpace(summary), Evidence: strings.TrimSpace(evidence),
			Location: strings.TrimSpace(location), Severity: strings.TrimSpace(severity)}
		if e.Summary == "" || strings.ContainsAny(e.Summary+e.Location+e.Severity, "\r\n") || strings.Contains(e.Evidence, "\r") {
			return
		}
		out := text
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += formatEntry(e)
		after, err := parseDeferredWork("deferred-work.md", "/p", out)
		if err != nil {
			t.Fatalf("appending made the file unreadable: %v\n%s", err, out)
		}
		if len(after) != len(before)+1 {
			t.Fatalf("%d items before, %d after:\n%s", len(before), len(after), out)
		}
		for i := range before {
			if before[i] != after[i] {
				t.Fatalf("item %d changed: %+v → %+v", i, before[i], after[i])
			}
		}
		got := after[len(after)-1]
		if got.Summary != e.Summary || got.Evidence != trimLines(e.Evidence) || got.Location != e.Location || got.Severity != e.Severity || !got.Open() {
			t.Fatalf("read back %+v, wrote %+v:\n%s", got, e, out)
		}
	})
}

// trimLines is s with each line trimmed, as an item's value is written.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "\n")
}
