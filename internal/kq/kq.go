//go:build darwin || freebsd

// Package kq waits on kqueue events (a directory's entries changing, a
// process exiting) in the Go netpoller, so a waiter on macOS and FreeBSD
// sleeps in the kernel as it does on Linux with inotify and pidfds.
package kq

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Queue is one kqueue with the descriptors of the directories it watches.
type Queue struct {
	fd int
	f  *os.File
	rc syscall.RawConn

	mu   sync.Mutex
	dirs []int
}

// New opens a kqueue.
func New() (*Queue, error) {
	fd, err := unix.Kqueue()
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// A kqueue descriptor is readable while events are pending, so the
	// netpoller can wait on it like on a socket.
	f := os.NewFile(uintptr(fd), "kqueue")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Queue{fd: fd, f: f, rc: rc}, nil
}

// WatchDir reports changes to dir's entries: a file created, written in
// place of another by rename, removed, or the directory itself going away.
func (q *Queue) WatchDir(dir string) error {
	dfd, err := unix.Open(dir, dirOpenFlags|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, dfd, unix.EVFILT_VNODE, unix.EV_ADD|unix.EV_CLEAR)
	ev.Fflags = unix.NOTE_WRITE | unix.NOTE_EXTEND | unix.NOTE_ATTRIB | unix.NOTE_DELETE | unix.NOTE_RENAME
	if _, err := unix.Kevent(q.fd, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(dfd)
		return err
	}
	q.mu.Lock()
	q.dirs = append(q.dirs, dfd)
	q.mu.Unlock()
	return nil
}

// ErrNoProcess is returned by WatchProcess for a process that is already gone.
var ErrNoProcess = errors.New("no such process")

// WatchProcess reports pid's exit, once.
func (q *Queue) WatchProcess(pid int) error {
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	_, err := unix.Kevent(q.fd, []unix.Kevent_t{ev}, nil, nil)
	if errors.Is(err, unix.ESRCH) {
		return ErrNoProcess
	}
	return err
}

// Wait blocks until at least one watched event happened (true) or the queue
// was closed (false).
func (q *Queue) Wait() bool {
	events := make([]unix.Kevent_t, 16)
	got := false
	err := q.rc.Read(func(fd uintptr) bool {
		n, err := unix.Kevent(int(fd), nil, events, &unix.Timespec{})
		switch {
		case errors.Is(err, unix.EINTR):
			return false
		case err != nil:
			return true
		}
		got = n > 0
		return got
	})
	return err == nil && got
}

// Close ends every watch; a Wait in progress returns false.
func (q *Queue) Close() {
	q.f.Close()
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, d := range q.dirs {
		unix.Close(d)
	}
	q.dirs = nil
}
