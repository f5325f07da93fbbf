// Package proc answers questions about other processes: whether one is alive,
// when it started, whether it holds a lock.
package proc

import (
	"errors"
	"syscall"
)

// Is reports whether pid is alive and is the process that started at
// start (0: any process with that pid).
func Is(pid int, start uint64) bool {
	if !Alive(pid) {
		return false
	}
	if start == 0 {
		return true
	}
	now, ok := Start(pid)
	return !ok || now == start
}

// LockHeld reports whether some process holds a flock on path, without
// creating the file and without waiting: the probe takes a shared lock for
// an instant, so it never blocks and never holds anything.
func LockHeld(path string) bool {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false // no lock file: nobody holds it
	}
	defer syscall.Close(fd)
	if err := syscall.Flock(fd, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(fd, syscall.LOCK_UN)
	return false
}
