package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// A sim child made to meet a usage limit (STORY_AUTOMATOR_SIM_LIMIT) shows
// it as Claude Code does; monitor-session ends it limited at once (exit 9)
// with the reason, the reset time and the agent, and presses Escape so its
// "continuing automatically" never runs the turn again.
func TestASimChildAtAUsageLimitEndsLimitedWithItsResetTime(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	until := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	env := []string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=finish", "STORY_AUTOMATOR_SIM_LIMIT=reason=usage_limit until=" + until.Format(time.RFC3339)}
	name := p.spawn(env, "--agent", "sim", "--prompt", "do the step")
	res, code := p.run(env, "monitor-session", name, "--timeout", "60s")
	if code != 9 || res["finalState"] != "limited" || res["reason"] != "usage_limit" || res["agent"] != "sim" ||
		res["resetsAt"] != until.Format(time.RFC3339) {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, out)
	}
	waitFile(t, stringOr(res["outputFile"]), func(s string) bool { return strings.Contains(s, "Automatic continue cancelled") })
}

// The run's share of a limit: the first child is let through (after=1),
// the next meets a rate limit for a while, without a reset time when
// noreset says so.
func TestASimLimitLetsTheFirstChildrenThrough(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	env := []string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=finish", "STORY_AUTOMATOR_SIM_LIMIT=reason=overloaded for=1h after=1 noreset"}
	first := p.spawn(env, "--agent", "sim", "--prompt", "first")
	if res, code := p.run(env, "monitor-session", first, "--timeout", "60s"); code != 0 || res["finalState"] != "completed" {
		t.Fatalf("first child: %d %v", code, res)
	}
	second := p.spawn(env, "--agent", "sim", "--prompt", "second")
	res, code := p.run(env, "monitor-session", second, "--timeout", "60s")
	if code != 9 || res["finalState"] != "limited" || res["reason"] != "overloaded" || res["resetsAt"] != nil {
		t.Fatalf("second child: %d %v", code, res)
	}
}
