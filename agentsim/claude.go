package agentsim

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ClaudeVerb and ClaudeDuration make up the turn summary the Claude-like
// screen ends its turn with ("✻ Sautéed for 1m 12s").
const (
	ClaudeVerb     = "Sautéed"
	ClaudeDuration = "1m 12s"
)

// actClaudeScreen draws what Claude Code shows: a banner, the prompt, a
// spinner while it works, then the turn summary and an empty input box.
func actClaudeScreen(ctx context.Context, s *Sim) int {
	w := s.Out
	fmt.Fprint(w, claudeBanner())
	fmt.Fprintf(w, "> %s\r\n\r\n", firstLine(s.Prompt, 70))
	fmt.Fprint(w, "⏺ I'll take care of this step.\r\n\r\n")
	fmt.Fprint(w, "✻ Brewing… (0s · ↑ 12 tokens · esc to interrupt)")
	if !Sleep(ctx, s.Options.Delay) {
		return 1
	}
	if err := writeArtifact(s.Options.Artifact); err != nil {
		fmt.Fprintf(w, "\r\nagent-sim: %v\r\n", err)
		return 1
	}
	// Redraw the spinner line as the summary, as Claude Code does.
	fmt.Fprint(w, "\r\x1b[2K⏺ Done: the step's work is complete.\r\n\r\n")
	fmt.Fprintf(w, "✻ %s for %s\r\n\r\n", ClaudeVerb, ClaudeDuration)
	fmt.Fprint(w, inputBox())
	return idle(ctx, s)
}

func claudeBanner() string {
	var b strings.Builder
	b.WriteString("╭" + strings.Repeat("─", 58) + "╮\r\n")
	for _, l := range []string{"✻ Welcome to Claude Code!", "", "  /help for help, /status for your current setup"} {
		b.WriteString("│ " + pad(l, 56) + " │\r\n")
	}
	b.WriteString("╰" + strings.Repeat("─", 58) + "╯\r\n\r\n")
	return b.String()
}

func inputBox() string {
	return "╭" + strings.Repeat("─", 58) + "╮\r\n" +
		"│ > " + strings.Repeat(" ", 54) + " │\r\n" +
		"╰" + strings.Repeat("─", 58) + "╯\r\n" +
		"  ? for shortcuts\r\n"
}

func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

func firstLine(s string, max int) string {
	l, _, _ := strings.Cut(s, "\n")
	if utf8.RuneCountInString(l) > max {
		r := []rune(l)
		l = string(r[:max]) + "…"
	}
	return l
}
