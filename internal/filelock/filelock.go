// Package filelock takes an exclusive flock on a sidecar file with a bounded
// wait, queueing in the kernel instead of polling.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// ErrTimeout is returned when the lock was not granted within the bound.
var ErrTimeout = errors.New("timed out waiting for the lock")

// Acquire locks path (created 0600 when missing) exclusively and returns the
// function that releases it. It waits at most wait, or until ctx ends.
//
// A contended lock is waited for with a blocking flock in a goroutine, so
// waiters sleep in the kernel and wake as soon as the holder releases; a
// polling loop would wake late under load and can starve a waiter for as long
// as others keep winning the race. When the bound passes first, the goroutine
// is left to finish: it releases the lock the moment it gets it.
func Acquire(ctx context.Context, path string, wait time.Duration) (func(), error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("lock %s: refusing a symlinked lock file", path)
	}
	// newLock opens with O_NOFOLLOW, closing the window between the Lstat
	// above and the open: a symlink swapped in meanwhile is refused, not followed.
	fl := newLock(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if ok {
		return func() { _ = fl.Unlock() }, nil
	}
	granted := make(chan error, 1)
	go func() { granted <- fl.Lock() }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-granted:
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return func() { _ = fl.Unlock() }, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	go func() {
		if <-granted == nil {
			_ = fl.Unlock()
		}
	}()
	return nil, fmt.Errorf("%w: %s after %s", ErrTimeout, path, wait)
}

// newLock opens lock files 0600 and never through a symlink (O_NOFOLLOW).
func newLock(path string) *flock.Flock {
	return flock.New(path, flock.SetPermissions(0o600), flock.SetFlag(os.O_CREATE|os.O_RDONLY|syscall.O_NOFOLLOW))
}
