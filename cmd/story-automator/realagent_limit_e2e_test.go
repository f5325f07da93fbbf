package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// Each real CLI limited by model-sim ends its child limited with the right
// reason and a reset time within a minute of the scripted one; the time from
// the CLI meeting the limit to the monitor knowing is logged, not asserted.

// subscriberClaude writes Claude Code's home signed in as a subscriber, the
// sign-in whose usage limit names its window and reset.
func subscriberClaude(c offline.Config) (offline.Env, error) {
	c.Subscriber = true
	return offline.Claude(c)
}

// expectLimited watches the child to its end and checks it limited with
// reason, its reset within a minute of the limit's start plus lasts.
func (p *realClaudeProject) expectLimited(t *testing.T, name, reason string, lasts time.Duration) map[string]any {
	t.Helper()
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "3m")
	knew := time.Now()
	first, ok := firstLimited(p.srv)
	if code != 9 || res["finalState"] != "limited" || res["reason"] != reason || !ok {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v (limited exchange: %v)\noutput:\n%s", code, res, ok, tail(string(out), 3000))
	}
	resets, err := time.Parse(time.RFC3339, stringOr(res["resetsAt"]))
	want := first.At.Add(lasts)
	if err != nil || resets.Sub(want).Abs() > time.Minute {
		t.Fatalf("resetsAt %v (%v), want within a minute of %s", res["resetsAt"], err, want.UTC().Format(time.RFC3339))
	}
	t.Logf("%s: the CLI met the limit at %s; the monitor knew %.1fs later (resetsAt %s, scripted %s)",
		res["agent"], first.At.UTC().Format(time.RFC3339Nano), knew.Sub(first.At).Seconds(), res["resetsAt"], want.UTC().Format(time.RFC3339))
	return res
}

// firstLimited is the first request model-sim refused at its limit.
func firstLimited(srv *modelsim.Server) (modelsim.Exchange, bool) {
	for _, ex := range srv.Exchanges() {
		if ex.Limit != "" {
			return ex, true
		}
	}
	return modelsim.Exchange{}, false
}

// Claude Code signed in as a subscriber, at its 5-hour limit for 150 s:
// its StopFailure hook and transcript say usage_limit with the exact reset,
// and its "continuing automatically" is cancelled.
func TestRealClaudeChildAtItsUsageLimitEndsLimited(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "claude", subscriberClaude, "limit: {after: 0, for: 150s, kind: usage}\n", offline.Dialogs{})
	name := p.spawn(p.env, "--agent", "claude", "--prompt", "Please write the proof file.")
	p.expectLimited(t, name, "usage_limit", 150*time.Second)
	screen, _ := p.run(p.env, "session", "capture", name)
	if !strings.Contains(fmt.Sprint(screen), "Automatic continue cancelled") {
		t.Fatalf("the limited Claude child still means to continue by itself:\n%v", screen)
	}
}

// Codex exec at its plan's usage limit exits 1 saying when to try again.
func TestRealCodexChildAtItsUsageLimitEndsLimited(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "codex", offline.Codex, "limit: {after: 0, for: 150s, kind: usage}\n", offline.Dialogs{})
	name := p.spawn(p.env, "--agent", "codex", "--prompt", "Please write the proof file.")
	p.expectLimited(t, name, "usage_limit", 150*time.Second)
}

// Gemini CLI gives up on a quota whose retry delay is over 5 minutes and
// prints the delay.
func TestRealGeminiChildAtItsQuotaEndsLimited(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "gemini", offline.Gemini, "limit: {after: 0, for: 1h, kind: usage}\n", offline.Dialogs{})
	name := p.spawn(p.env, "--agent", "gemini", "--prompt", "Please write the proof file.")
	p.expectLimited(t, name, "usage_limit", time.Hour)
}
