package dashboard

import (
	"fmt"
	"time"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// attemptLines is a story's attempts as a table, its heading first: agent,
// model (when wide), final state, reason, duration, tokens, cost, the
// verifier's verdict.
func attemptLines(u *orchestrator.Unit, wide bool) []string {
	row := "%-8s %2s %-6s %s%-9s %-12s %6s %6s %6s  %s"
	model := func(m string) string {
		if !wide {
			return ""
		}
		return fmt.Sprintf("%-16s ", textline.Cut(m, 16))
	}
	out := []string{fmt.Sprintf(row, "step", "#", "agent", model("model"), "state", "reason", "time", "tokens", "cost", "verifier")}
	for _, s := range u.Steps {
		for _, a := range s.Attempts {
			state := a.FinalState
			if state == "" {
				state = "running"
			}
			out = append(out, fmt.Sprintf(row, s.Name, fmt.Sprint(a.N), textline.Cut(a.Agent, 6), model(textline.OrDash(a.Model)),
				textline.Cut(state, 9), textline.Cut(textline.OrDash(a.Reason), 12), duration(a.WallMs), tokens(a.Usage), cost(a.Usage),
				textline.OneLine(verdict(a))))
		}
	}
	if len(out) == 1 {
		out = append(out, "no attempt yet")
	}
	if u.Commit != "" {
		out = append(out, "commit "+u.Commit)
	}
	return out
}

func verdict(a orchestrator.Attempt) string {
	switch {
	case a.Verifier != "" && a.Detail != "":
		return a.Verifier + ": " + a.Detail
	case a.Verifier != "":
		return a.Verifier
	}
	return textline.OrDash(a.Detail)
}

func duration(ms int64) string {
	if ms <= 0 {
		return "—"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

func tokens(u *spend.Usage) string {
	if u == nil {
		return "—"
	}
	return spend.FormatTokens(u.Tokens())
}

func cost(u *spend.Usage) string {
	if u == nil {
		return "—"
	}
	return spend.FormatCost(u.CostUSD)
}
