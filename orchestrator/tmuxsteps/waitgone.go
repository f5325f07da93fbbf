package tmuxsteps

import (
	"context"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/wake"
)

// waitGone waits up to d for every pid to exit and reports whether they
// did. The kernel wakes the wait at each exit, so it ends the moment the
// last one does (a 10 ms polling loop added up to 10 ms to every step of a
// run).
func waitGone(ctx context.Context, pids []int, d time.Duration) bool {
	w := wake.New()
	defer w.Close()
	for _, pid := range pids {
		_ = w.Process(pid) // never fails for a pid > 0; a gone one wakes at once
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		if !anyAlive(pids) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-w.C:
		}
	}
}

func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if proc.Alive(pid) {
			return true
		}
	}
	return false
}
