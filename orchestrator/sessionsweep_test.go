package orchestrator

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux/child"
)

// sweepingSteps is a step runner whose sessions leave files: it records
// every sweep it is asked for.
type sweepingSteps struct {
	*fakeSteps
	olderThan []time.Duration
	kept      func(string) bool
}

func (s *sweepingSteps) SweepSessions(olderThan time.Duration, _ time.Time, keep func(string) bool) []string {
	s.olderThan, s.kept = append(s.olderThan, olderThan), keep
	return nil
}

func TestARunSweepsFinishedSessionsOlderThanTheTTL(t *testing.T) {
	t.Parallel()
	for env, want := range map[string][]time.Duration{"": {24 * time.Hour}, "90m": {90 * time.Minute}, "0": nil, "off": nil} {
		h := newHarness(t, "1-1")
		h.project.retro["1"] = true
		h.env[EnvSessionTTL] = env
		steps := &sweepingSteps{fakeSteps: h.steps}
		d := h.deps()
		d.Steps = steps
		if _, err := Run(context.Background(), h.options(), d); err != nil {
			t.Fatal(err)
		}
		if len(steps.olderThan) != len(want) || (len(want) == 1 && steps.olderThan[0] != want[0]) {
			t.Fatalf("%s=%q: swept with %v, want %v", EnvSessionTTL, env, steps.olderThan, want)
		}
	}
}

func TestAResumedRunSparesTheSessionsItsAttemptsName(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	res := h.runUntilEscalatedByCrashes()
	named := res.State.Unit("1-1").Step(StepCreate).Attempts[0].Session
	h.steps.script = nil
	steps := &sweepingSteps{fakeSteps: h.steps}
	d := h.deps()
	d.Steps = steps
	o := h.options()
	o.Resume = true
	if _, err := Run(context.Background(), o, d); err != nil {
		t.Fatal(err)
	}
	if named == "" || steps.kept == nil || !steps.kept(named) || steps.kept("sa-unrelated") {
		t.Fatalf("the escalated attempt's session %q was not spared", named)
	}
}

func TestABadSessionTTLIsAConfigError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.env[EnvSessionTTL] = "a day"
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrConfig) || Code(err) != "invalid_run_config" {
		t.Fatalf("%v", err)
	}
}

// What `session spawn` sweeps: the project's old finished sessions, but the
// one its latest run names, and nothing when the TTL is off or bad.
func TestSweepFinishedSessionsSparesWhatTheLatestRunNames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := filepath.Join(h.root, "sessions")
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	named, other := child.ProjectPrefix(h.root)+"e1-s1-1-dev-aaaa", child.ProjectPrefix(h.root)+"e1-s2-1-dev-bbbb"
	for _, name := range []string{named, other} {
		if _, err := sessionstate.Update(dir, name, func(st *sessionstate.State) error {
			st.Lifecycle, st.ProjectRoot = sessionstate.LifecycleExited, h.root
			st.ExitedAt = marker.Timestamp(now.Add(-48 * time.Hour))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	run := &State{Version: StateVersion, RunID: "r", Units: []*Unit{{Key: "1-1", Steps: []*StepState{{Name: StepDev, Attempts: []Attempt{{Session: named}}}}}}}
	if err := SaveState(filepath.Join(RunsDir(h.root), "run-r.md"), run); err != nil {
		t.Fatal(err)
	}
	for _, ttl := range []string{"off", "soon"} {
		h.env[EnvSessionTTL] = ttl
		if swept, err := SweepFinishedSessions(h.root, dir, h.getenv, now); len(swept) != 0 || (ttl == "soon") != errors.Is(err, ErrConfig) {
			t.Fatalf("TTL %s: swept %v, %v", ttl, swept, err)
		}
	}
	h.env[EnvSessionTTL] = ""
	swept, err := SweepFinishedSessions(h.root, dir, h.getenv, now)
	if err != nil || !slices.Equal(swept, []string{other}) {
		t.Fatalf("swept %v (%v), want only %s", swept, err, other)
	}
}
