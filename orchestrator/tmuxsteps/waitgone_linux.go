package tmuxsteps

import (
	"context"
	"errors"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
	"golang.org/x/sys/unix"
)

// waitGone waits up to d for every pid to exit and reports whether they
// did. Each process's pidfd turns readable when it exits, so the wait ends
// the moment the last one does (a 10 ms polling loop added up to 10 ms to
// every step of a run); without pidfds it polls.
func waitGone(ctx context.Context, pids []int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	var fds []unix.PollFd
	for _, pid := range pids {
		if !proc.Alive(pid) {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // exited between the two checks
		}
		if err != nil {
			closeAll(fds)
			return pollGone(ctx, pids, deadline)
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	defer closeAll(fds)
	for len(fds) > 0 {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return false
		}
		// Slices of at most 100 ms keep a cancelled ctx noticed.
		n, err := unix.Poll(fds, int(min(left, 100*time.Millisecond).Milliseconds())+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return pollGone(ctx, pids, deadline)
		}
		if n <= 0 {
			continue
		}
		kept := fds[:0]
		for _, p := range fds {
			if p.Revents == 0 {
				kept = append(kept, p)
			} else {
				unix.Close(int(p.Fd))
			}
		}
		fds = kept
	}
	return true
}

func closeAll(fds []unix.PollFd) {
	for _, p := range fds {
		unix.Close(int(p.Fd))
	}
}
