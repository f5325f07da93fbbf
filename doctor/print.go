package doctor

import (
	"fmt"
	"io"
)

// Fields is the report as `doctor`'s JSON: ok, the checks, and on a
// failure the contract's error and message.
func (r Report) Fields() map[string]any {
	out := map[string]any{"ok": r.OK, "checks": r.Checks}
	if !r.OK {
		out["error"], out["message"] = "doctor_failed", fmt.Sprintf("%d check(s) failed", r.Failed())
	}
	return out
}

// WriteText prints the report for a person: one line per check, with its
// fix below a check that has one.
func (r Report) WriteText(w io.Writer) {
	for _, ch := range r.Checks {
		name := ch.Name
		if ch.Agent != "" {
			name = ch.Agent + " " + ch.Name
		}
		fmt.Fprintf(w, "%-4s  %-16s %s\n", ch.Status, name, ch.Detail)
		if ch.Fix != "" {
			fmt.Fprintf(w, "      %-16s fix: %s\n", "", ch.Fix)
		}
	}
}
