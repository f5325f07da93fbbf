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

	"golang.org/x/sys/unix"
)

// ErrTimeout is returned when the lock was not granted within the bound.
var ErrTimeout = errors.New("timed out waiting for the lock")

// Acquire locks path (created 0600 when missing) exclusively and returns the
// function that releases it. It waits at most wait, or until ctx ends.
//
// The lock file is opened once, never through a symlink, and every flock
// call works on that one descriptor: nothing reopens (or re-creates) the path
// later, so the lock is always on the inode that was checked.
//
// A contended lock is waited for with a blocking flock in a goroutine, so
// waiters sleep in the kernel and wake as soon as the holder releases; a
// polling loop would wake late under load and can starve a waiter for as long
// as others keep winning the race. When the bound passes first, the goroutine
// is left to finish: it releases the lock and closes the descriptor the
// moment it gets it.
func Acquire(ctx context.Context, path string, wait time.Duration) (func(), error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	release := func() {
		_ = unix.Flock(fd, unix.LOCK_UN)
		_ = f.Close()
	}
	switch err := flock(fd, unix.LOCK_EX|unix.LOCK_NB); {
	case err == nil:
		return release, nil
	case !errors.Is(err, unix.EWOULDBLOCK):
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if ctx.Err() != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s: %v", ErrTimeout, path, ctx.Err())
	}
	granted := make(chan error, 1)
	go func() { granted <- flock(fd, unix.LOCK_EX) }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-granted:
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return release, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	go func() {
		if <-granted == nil {
			release()
			return
		}
		_ = f.Close()
	}()
	return nil, fmt.Errorf("%w: %s after %s", ErrTimeout, path, wait)
}

// open opens a lock file 0600, never through a symlink (O_NOFOLLOW makes
// the open itself refuse one, with no window after a separate check).
func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("lock %s: refusing a symlinked lock file", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}

// flock retries a call interrupted by a signal.
func flock(fd, how int) error {
	for {
		err := unix.Flock(fd, how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
