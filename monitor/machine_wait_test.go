package monitor

import (
	"math/rand"
	"testing"
	"time"

	"github.com/story-automator/story-automator/sessionstate"
)

// sessionShapes are the states a monitored session goes through.
func sessionShapes() []*sessionstate.State {
	silent := running()
	claude := running()
	claude.Agent = "claude"
	noAgent := running()
	noAgent.AgentPid = 0
	killed := running()
	killed.Lifecycle = "killed"
	sent := stamped(1)
	sent.SendBaseline = &sessionstate.SendBaseline{Turns: 1, OutputOffset: 50}
	return []*sessionstate.State{nil, starting(), noAgent, silent, claude, stamped(1), stamped(2), sent, exited(0), killed}
}

// TestWaitDeadlinesAreAlwaysInTheFuture drives machines through random
// sequences of looks and answers: every wait must be until a moment after
// the look (or open-ended), and at one moment the machine must come to a
// wait or a final state after a few steps — else its driver would spin.
func TestWaitDeadlinesAreAlwaysInTheFuture(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	shapes := sessionShapes()
	sizes := []int64{0, 0, 40, 50, 100, 5000}
	steps := []time.Duration{0, time.Millisecond, 500 * time.Millisecond, time.Second, 3 * time.Second, 10 * time.Second, time.Minute, 10 * time.Minute}
	for run := 0; run < 2000; run++ {
		opt := testOptions()
		if rng.Intn(2) == 0 {
			opt.ReturnAfter = 8 * time.Second
		}
		if rng.Intn(4) == 0 {
			opt.StartTimeout, opt.StuckAfter = 0, 0
		}
		m := NewMachine(opt, t0)
		now := t0
		heuristic := rng.Intn(3) > 0
		for step := 0; step < 40; step++ {
			now = now.Add(steps[rng.Intn(len(steps))])
			f := Facts{Now: now, State: shapes[rng.Intn(len(shapes))], OutputSize: sizes[rng.Intn(len(sizes))],
				ScreenHeuristic: heuristic, RunnerGone: rng.Intn(10) == 0}
			a := settle(t, m, f, rng)
			if a.Kind == ActFinish {
				break
			}
			if !a.Until.IsZero() && !a.Until.After(now) {
				t.Fatalf("run %d step %d: wait until %v is not after the look at %v (facts %+v, state %+v)",
					run, step, a.Until, now, f, f.State)
			}
		}
	}
}

// settle answers the machine's requests at one moment until it waits or finishes.
func settle(t *testing.T, m *Machine, f Facts, rng *rand.Rand) Action {
	t.Helper()
	for i := 0; i < 6; i++ {
		a := m.Next(f)
		switch a.Kind {
		case ActWait, ActFinish:
			return a
		case ActVerify:
			m.Verified(Verdict{Verified: rng.Intn(4) == 0}, f.Now)
		case ActProbeScreen:
			m.ScreenProbed(ScreenVerdict{Done: rng.Intn(4) == 0}, f.OutputSize)
		case ActProbeSession:
			m.SessionProbed(rng.Intn(8) > 0, f.Now)
		}
	}
	t.Fatalf("no wait or final state after 6 requests at one moment (facts %+v, state %+v)", f, f.State)
	return Action{}
}
