package agentsim

import (
	"testing"
	"time"
)

func TestParseLimit(t *testing.T) {
	l, err := ParseLimit("reason=rate_limit until=2026-11-27T16:30:00Z after=2 step=dev noreset")
	if err != nil || l.Reason != "rate_limit" || l.Until.Format(time.RFC3339) != "2026-11-27T16:30:00Z" ||
		l.After != 2 || l.Step != "dev" || !l.NoReset {
		t.Fatalf("%+v %v", l, err)
	}
	if l, err := ParseLimit(""); err != nil || l.Reason != "usage_limit" || l.For != time.Minute {
		t.Fatalf("defaults %+v %v", l, err)
	}
	for _, bad := range []string{"reason=tired", "for=soon", "until=tomorrow", "after=x", "colour=red"} {
		if _, err := ParseLimit(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The run's children share the limit: the first `after` are let through,
// and the limit lasts `for` from the first that met it.
func TestTheRunsChildrenShareOneLimitClock(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{EnvLimit: "for=90s after=1", "STORY_AUTOMATOR_STATE_DIR": dir}
	sim := &Sim{Options: Options{SessionAgent: true}, Getenv: func(k string) string { return env[k] }}
	t0 := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)
	if _, _, ok, err := limitedNow(sim, t0); ok || err != nil {
		t.Fatalf("the first child was limited (%v)", err)
	}
	_, reset, ok, err := limitedNow(sim, t0.Add(10*time.Second))
	if !ok || err != nil || !reset.Equal(t0.Add(100*time.Second)) {
		t.Fatalf("second child: %v %s %v", ok, reset, err)
	}
	if _, _, ok, _ := limitedNow(sim, t0.Add(101*time.Second)); ok {
		t.Fatal("a child after the reset was limited")
	}
	outside := &Sim{Options: Options{}, Getenv: sim.Getenv}
	if _, _, ok, _ := limitedNow(outside, t0.Add(20*time.Second)); ok {
		t.Fatal("agent-sim run as a real CLI's tool met the session agent's limit")
	}
}

// A limit that began within a second lifts at a whole second, the one its
// words and its transcript's epoch name, not before and not after.
func TestASimLimitLiftsAtTheWholeSecondItNames(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{EnvLimit: "for=60s", "STORY_AUTOMATOR_STATE_DIR": dir}
	sim := &Sim{Options: Options{SessionAgent: true}, Getenv: func(k string) string { return env[k] }}
	t0 := time.Date(2026, 11, 27, 16, 0, 0, 300_000_000, time.UTC)
	_, reset, ok, err := limitedNow(sim, t0)
	if !ok || err != nil || !reset.Equal(time.Unix(reset.Unix(), 0)) {
		t.Fatalf("limit: %v %s %v, want a reset at a whole second", ok, reset, err)
	}
	if _, _, ok, _ := limitedNow(sim, time.Unix(reset.Unix(), 0)); ok {
		t.Fatal("a child at the second the limit named met it still")
	}
}

// Two limits in one value: a dev child meets the dropped stream, the others
// count toward the usage limit, which begins at its third child.
func TestASimRunMeetsItsLimitsInTurn(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{EnvLimit: "reason=dropped_stream step=dev for=10s; after=2 for=60s", "STORY_AUTOMATOR_STATE_DIR": dir}
	sim := &Sim{Options: Options{SessionAgent: true}, Getenv: func(k string) string { return env[k] }}
	t0 := time.Date(2026, 11, 27, 16, 0, 0, 0, time.UTC)
	step := func(name string, at time.Duration) (string, bool) {
		env["STORY_AUTOMATOR_STEP"] = name
		l, _, ok, err := limitedNow(sim, t0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		return l.Reason, ok
	}
	if r, ok := step("create", 0); ok {
		t.Fatalf("create met %s", r)
	}
	if r, ok := step("dev", time.Second); !ok || r != "dropped_stream" {
		t.Fatalf("dev: %s %v, want the dropped stream", r, ok)
	}
	if r, ok := step("dev", 11*time.Second); ok {
		t.Fatalf("dev after the drop's end met %s", r)
	}
	if r, ok := step("automate", 12*time.Second); !ok || r != "usage_limit" {
		t.Fatalf("automate: %s %v, want the usage limit at the third child", r, ok)
	}
}
