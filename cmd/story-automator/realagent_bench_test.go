package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// BenchmarkRealAgentDetectionLatency measures, per agent CLI, the time from
// the model's last answer (model-sim's record of it) to monitor-session's
// return: through Claude Code's Stop hook, Claude Code's screen alone (hooks
// off), and Codex's and Gemini's exits. Each agent runs detectionRounds
// children; p50 and p99 (the slowest, at this count) are reported in ms.
func BenchmarkRealAgentDetectionLatency(b *testing.B) {
	cases := []struct {
		name, agent string
		home        func(offline.Config) (offline.Env, error)
		hooksOff    bool
	}{
		{"claude-hook", "claude", offline.Claude, false},
		{"claude-screen", "claude", offline.Claude, true},
		{"codex-hook", "codex", offline.Codex, false},
		{"gemini-exit", "gemini", offline.Gemini, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if realagent.Find(c.agent) == "" {
				b.Skip("REAL AGENT MISSING: " + c.agent + "; run " + realagent.InstallCommand)
			}
			var lat []time.Duration
			for range detectionRounds {
				lat = append(lat, detectOnce(b, c.agent, c.home, c.hooksOff))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			p50, p99 := lat[len(lat)/2], lat[len(lat)-1]
			b.ReportMetric(float64(p50.Milliseconds()), "p50-ms")
			b.ReportMetric(float64(p99.Milliseconds()), "p99-ms")
			fmt.Printf("detection %-14s rounds %d  p50 %5d ms  p99 %5d ms\n", c.name, len(lat), p50.Milliseconds(), p99.Milliseconds())
		})
	}
}

const detectionRounds = 8

func detectOnce(b *testing.B, agent string, home func(offline.Config) (offline.Env, error), hooksOff bool) time.Duration {
	p := newRealAgentProject(b, agent, home, "rules:\n  - match: \"say hello\"\n    actions:\n      - reply: \"Hello.\"\n", offline.Dialogs{})
	if hooksOff {
		settings := filepath.Join(p.home, ".claude", "settings.json")
		if err := os.WriteFile(settings, []byte(`{"skipDangerousModePermissionPrompt":true,"disableAllHooks":true}`), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	name := p.spawn(p.env, "--agent", agent, "--prompt", "Please say hello.")
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "120s")
	returned := time.Now()
	if code != 0 || res["finalState"] != "completed" {
		b.Fatalf("%s: monitor %d %v", agent, code, res)
	}
	ex := p.srv.Exchanges()
	var last time.Time
	for _, e := range ex {
		if !e.Side {
			last = e.At
		}
	}
	if last.IsZero() {
		b.Fatalf("%s: model-sim saw no main request", agent)
	}
	return returned.Sub(last)
}
