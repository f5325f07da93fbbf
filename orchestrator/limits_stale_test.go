package orchestrator

import (
	"context"
	"testing"
	"time"

	"github.com/story-automator/story-automator/monitor"
)

// An agent that meets its limit again once the reset it named has passed
// (its clock, or the API's, is off) names that same past reset: the run
// backs off from a minute instead of starting attempt after attempt at once.
func TestALimitMetAgainPastItsResetBacksOff(t *testing.T) {
	var reset time.Time
	h := newLimitHarness(t, 3, "", monitor.ReasonUsageLimit, func(now time.Time) time.Time {
		if reset.IsZero() {
			reset = now.Add(10 * time.Minute).Truncate(time.Second)
		}
		return reset
	})
	h.env[EnvLimitJitter] = "0s"
	if _, err := h.runWith(context.Background(), h.options()); err != nil {
		t.Fatalf("run: %v", err)
	}
	times := h.devTimes()
	if len(times) != 4 || times[1].Before(reset) {
		t.Fatalf("dev attempts at %v, want four, the second after the reset %s", times, reset)
	}
	for i, want := range []time.Duration{time.Minute, 2 * time.Minute} {
		if gap := times[i+2].Sub(times[i+1]); gap < want {
			t.Fatalf("attempt %d started %s after the limit met past its reset, want a backoff of %s", i+3, gap, want)
		}
	}
}
