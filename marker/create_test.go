package marker

import (
	"strings"
	"testing"
	"time"
)

func TestNewChecksTheSpecAndBuildsAnActiveMarker(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Mode: "bogus"}, "--mode must be story or loop"},
		{Spec{Mode: ModeStory}, "needs --remaining N"},
		{Spec{Mode: ModeStory, RemainingSet: true, Remaining: -1}, "--remaining must not be negative"},
		{Spec{Mode: ModeLoop, Pid: -1}, "--pid must not be negative"},
	} {
		if _, err := New(tc.spec, now); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.spec, err, tc.want)
		}
	}
	m, err := New(Spec{Mode: ModeStory, RemainingSet: true, Remaining: 2, Story: "1.1", Owner: "o"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Active() || m.CreatedAt != Timestamp(now) || m.Heartbeat != m.CreatedAt || m.OwnerSession != "o" || m.CurrentStory != "1.1" {
		t.Fatalf("%+v", m)
	}
	step, rem := "dev", 0
	m.StopHookBlocks = 3
	m.Beat(Progress{Step: &step, Remaining: &rem}, now)
	if m.CurrentStory != "1.1" || m.CurrentStep != "dev" || m.StoriesRemaining != 0 || m.Heartbeat == m.CreatedAt {
		t.Fatalf("after beat %+v", m)
	}
	m.Claim("p")
	if m.OwnerSession != "p" || m.StopHookBlocks != 0 {
		t.Fatalf("after claim %+v", m)
	}
}
