package main

import (
	"os"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realagent"
)

// BenchmarkOrchestratingSessionTurns measures what the orchestrating Claude
// Code session spends on a headless run of 3 stories, per story: its model
// requests (turns) and tokens, for steps of each duration in
// STORY_AUTOMATOR_BENCH_STEP_DELAYS (comma-separated; default 2s,20s). The
// session starts the run as a background task and is woken when it ends, so
// neither should grow with the steps' duration.
func BenchmarkOrchestratingSessionTurns(b *testing.B) {
	if realagent.Find("claude") == "" {
		b.Skip("REAL AGENT MISSING: claude; run " + realagent.InstallCommand)
	}
	delays := os.Getenv("STORY_AUTOMATOR_BENCH_STEP_DELAYS")
	if delays == "" {
		delays = "2s,20s"
	}
	for _, d := range strings.Split(delays, ",") {
		b.Run("step-"+d, func(b *testing.B) {
			res := orchestrateThreeStories(b, d, false)
			u := res.usage
			b.ReportMetric(float64(res.requests)/3, "requests/story")
			b.ReportMetric(float64(u.InputTokens+u.OutputTokens+u.CacheReadTokens+u.CacheWriteTokens)/3, "tokens/story")
			b.ReportMetric(float64(res.requests)/res.elapsed.Hours(), "requests/hour")
			b.ReportMetric(res.elapsed.Minutes(), "run-min")
		})
	}
}
