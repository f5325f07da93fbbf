package timeline

import (
	"testing"
	"time"
)

func TestDurationIsReadAtAGlance(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0s", 400 * time.Millisecond: "0.4s", 45 * time.Second: "45s",
		12*time.Minute + 30*time.Second: "12m30s", 62 * time.Minute: "1h02m", 26 * time.Hour: "26h00m",
	} {
		if got := duration(d); got != want {
			t.Errorf("duration(%s) = %q, want %q", d, got, want)
		}
	}
}
