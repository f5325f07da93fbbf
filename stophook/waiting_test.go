package stophook

import (
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// waitingMarker is a headless run's marker while it waits out a limit that
// lifts in two hours, its hook at the brink of the circuit breaker.
func waitingMarker(mut ...func(*marker.Marker)) *marker.Marker {
	return active(append([]func(*marker.Marker){func(m *marker.Marker) {
		m.OwnerPid, m.StopHookBlocks = 4242, DefaultMax-1
		m.Waiting = &marker.Waiting{Reason: "usage_limit", Agent: "claude", ResetsAt: marker.Timestamp(t0.Add(2 * time.Hour)),
			ResumesAt: marker.Timestamp(t0.Add(2*time.Hour + 10*time.Second)), Since: marker.Timestamp(t0)}
	}}, mut...)...)
}

func TestWaitingRunIsAliveAndTheOwnerIsToldToWait(t *testing.T) {
	codex := Input{SessionID: "owner", StopHookActive: boolp(true), HookEventName: "Stop", TurnID: "t1"}
	for _, in := range []Input{ownerIn(boolp(true)), codex} {
		d := Decide(in, waitingMarker(), nil, env(), t0)
		if !d.Blocks() || d.Kind != KindBlock {
			t.Fatalf("decision %+v: a waiting run keeps its owner", d)
		}
		reason := d.Output.Reason
		for _, want := range []string{"waiting", "claude", "usage_limit", "2026-11-22 14:00:10 UTC", "in 2h0m10s", "`story-automator status --wait"} {
			if !strings.Contains(reason, want) {
				t.Fatalf("reason lacks %q: %s", want, reason)
			}
		}
		if strings.Count(reason, "`story-automator") != 1 {
			t.Fatalf("the reason names more than one command: %s", reason)
		}
		if d.Next == nil || d.Next.StopHookBlocks != DefaultMax-1 {
			t.Fatalf("a wait must not move the circuit breaker: %+v", d.Next)
		}
	}
}

func TestWaitingUnownedRunIsNotTakenForDead(t *testing.T) {
	// No heartbeat for three hours: stale, but the run waits until later.
	m := waitingMarker(func(m *marker.Marker) {
		m.OwnerSession, m.OwnerPid = "", 0
		m.Heartbeat = marker.Timestamp(t0.Add(-3 * time.Hour))
		m.StopHookSeenHeartbeat = m.Heartbeat
	})
	if d := Decide(ownerIn(boolp(true)), m, nil, env(), t0); !d.Blocks() {
		t.Fatalf("decision %+v: a waiting run is alive", d)
	}
	// Long after the wait's end the heartbeat's age counts again.
	late := t0.Add(5 * time.Hour)
	if d := Decide(ownerIn(boolp(true)), m, nil, env(), late); d.Kind != KindReleaseStale {
		t.Fatalf("decision %+v long after the wait's end", d)
	}
}

func TestWaitingRunWhoseOrchestratorIsGoneIsReleased(t *testing.T) {
	m := waitingMarker()
	e := env(func(e *Env) { e.ProcessAlive = func(int) bool { return false } })
	if d := Decide(ownerIn(boolp(true)), m, nil, e, t0); d.Kind != KindReleaseStale {
		t.Fatalf("decision %+v: a wait proves nothing once the run's process is gone", d)
	}
}
