//go:build !linux

package tmuxsteps

import (
	"context"
	"time"
)

// waitGone waits up to d for every pid to exit and reports whether they did.
func waitGone(ctx context.Context, pids []int, d time.Duration) bool {
	return pollGone(ctx, pids, time.Now().Add(d))
}
