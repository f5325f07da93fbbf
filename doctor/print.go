package doctor

import (
	"fmt"
	"io"
)

// Fields is the report as `doctor`'s JSON: ok, the checks, and on a
// failure the contract's error and message.
func (r Report) Fields() map[string]any {
	out := map[string]any{"ok": r.OK, "checks": r.Checks}
	if r.Host != "" {
		out["host"], out["roundTrips"] = r.Host, r.RoundTrips
	}
	if !r.OK {
		out["error"], out["message"] = "doctor_failed", fmt.Sprintf("%d check(s) failed", r.Failed())
		// A failure with a code of its own (a refusal) names the error and its action.
		for _, c := range r.Checks {
			if c.Status == Fail && c.Code != "" {
				out["error"], out["message"], out["action"] = c.Code, c.Detail, c.Fix
				break
			}
		}
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
	if r.Host != "" {
		fmt.Fprintf(w, "host %s: %d ssh round trip(s)\n", r.Host, r.RoundTrips)
	}
}
