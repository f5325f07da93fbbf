//go:build darwin || freebsd

package wake

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// kqueue reports no opens or closes of a file.
const fileClosesWake = false

// The vnode events of a watched directory (an entry created, renamed in or
// out, removed; the directory itself going away) and of a watched file.
const vnodeEvents = unix.NOTE_WRITE | unix.NOTE_EXTEND | unix.NOTE_ATTRIB | unix.NOTE_DELETE | unix.NOTE_RENAME

// kernel watches with one kqueue (opened on the first watch) and the
// descriptors of the files and directories it watches. A kqueue descriptor
// is readable while events are pending, so the Go netpoller waits on it
// like on a socket and an idle waiter uses no CPU.
type kernel struct {
	wake func()

	mu      sync.Mutex
	fd      int
	queue   *os.File
	files   []int
	pids    map[int]bool
	closing bool
}

func newKernel(wake func()) *kernel {
	return &kernel{wake: wake, pids: map[int]bool{}}
}

// open opens the kqueue on first use; k.mu is held.
func (k *kernel) open() error {
	if k.queue != nil {
		return nil
	}
	fd, err := unix.Kqueue()
	if err != nil {
		return errNoKernel
	}
	unix.CloseOnExec(fd)
	f, rc, err := pollable(fd, "kqueue")
	if err != nil {
		return err
	}
	k.fd, k.queue = fd, f
	go k.read(rc)
	return nil
}

func (k *kernel) read(rc syscall.RawConn) {
	events := make([]unix.Kevent_t, 16)
	for {
		got := false
		err := rc.Read(func(fd uintptr) bool {
			for {
				// Asked again when a signal interrupts it: the Go runtime
				// preempts with signals, and an event seen as none is lost.
				n, err := unix.Kevent(int(fd), nil, events, &unix.Timespec{})
				if errors.Is(err, unix.EINTR) {
					continue
				}
				got = err == nil && n > 0
				return err != nil || got
			}
		})
		if err != nil || !got {
			return // closed
		}
		k.wake()
	}
}

// dir cannot tell a directory's entries apart: any entry's change wakes.
func (k *kernel) dir(dir string, names []string) error {
	return k.watchVnode(dir, dirOpenFlags)
}

func (k *kernel) file(path string) error {
	return k.watchVnode(path, fileOpenFlags)
}

func (k *kernel) watchVnode(path string, flags int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closing {
		return nil
	}
	if err := k.open(); err != nil {
		return err
	}
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "watch", Path: path, Err: err}
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, fd, unix.EVFILT_VNODE, unix.EV_ADD|unix.EV_CLEAR)
	ev.Fflags = vnodeEvents
	if _, err := unix.Kevent(k.fd, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "watch", Path: path, Err: err}
	}
	k.files = append(k.files, fd)
	return nil
}

func (k *kernel) process(pid int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pids[pid] || k.closing {
		return nil
	}
	if err := k.open(); err != nil {
		return err
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	_, err := unix.Kevent(k.fd, []unix.Kevent_t{ev}, nil, nil)
	switch {
	case errors.Is(err, unix.ESRCH):
		k.wake() // gone already
		return nil
	case err != nil:
		return errNoKernel
	}
	k.pids[pid] = true
	return nil
}

// release ends every watch: the reader sees the kqueue closed.
func (k *kernel) release() {
	if k.queue != nil {
		k.queue.Close()
	}
	for _, fd := range k.files {
		unix.Close(fd)
	}
	k.files = nil
}
