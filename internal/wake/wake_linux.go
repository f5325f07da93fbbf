package wake

import (
	"errors"
	"os"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

const fileClosesWake = true

// The inotify events of a watched directory's entries, and of a watched
// file. A file's closes count: a lock file is only ever opened, locked and
// closed, and each close ends an update made under the lock.
const (
	dirMask  = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_CREATE | unix.IN_DELETE | unix.IN_DELETE_SELF
	fileMask = unix.IN_MODIFY | unix.IN_CLOSE_NOWRITE | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW
)

// kernel watches with one inotify descriptor (opened on the first file or
// directory watch) and one pidfd per process. Both wait in the Go
// netpoller, so an idle waiter uses no CPU.
type kernel struct {
	wake func()

	mu      sync.Mutex
	inotify *os.File
	// inotifyFd is inotify's descriptor: calling its Fd method would take
	// it out of the netpoller.
	inotifyFd int
	names     map[int][]string // per watch descriptor: the entries that wake; none: all
	pidfds    map[int]*os.File
	closing   bool
	// closeFile closes one descriptor; tests stand in for it.
	closeFile func(*os.File)
	// closed is closed once every descriptor is.
	closed chan struct{}
}

func newKernel(wake func()) *kernel {
	return &kernel{wake: wake, names: map[int][]string{}, pidfds: map[int]*os.File{},
		closeFile: func(f *os.File) { f.Close() }, closed: make(chan struct{})}
}

func (k *kernel) dir(dir string, names []string) error {
	return k.addWatch(dir, dirMask, names)
}

func (k *kernel) file(path string) error {
	return k.addWatch(path, fileMask, nil)
}

func (k *kernel) addWatch(path string, mask uint32, names []string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closing {
		return nil
	}
	if k.inotify == nil {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return errNoKernel // no inotify, or no instance left for this user
		}
		k.inotify, k.inotifyFd = os.NewFile(uintptr(fd), "inotify"), fd
		go k.read(k.inotify)
	}
	wd, err := unix.InotifyAddWatch(k.inotifyFd, path, mask|unix.IN_MASK_ADD)
	if err != nil {
		return &os.PathError{Op: "watch", Path: path, Err: err}
	}
	had, watched := k.names[wd]
	switch {
	case watched && len(had) == 0, len(names) == 0:
		k.names[wd] = nil
	default:
		k.names[wd] = append(had, names...)
	}
	return nil
}

func (k *kernel) read(f *os.File) {
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		k.mu.Lock()
		wakes := eventsWake(buf[:n], k.names)
		k.mu.Unlock()
		if wakes {
			k.wake()
		}
	}
}

// eventsWake reports whether a batch of raw inotify events concerns an entry
// a watch asked for, or a watched directory or file itself.
func eventsWake(buf []byte, names map[int][]string) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off])) //nolint:gosec // G103: the kernel lays out each event so; the loop bound keeps the header inside buf
		nameStart := off + unix.SizeofInotifyEvent
		nameEnd := nameStart + int(ev.Len)
		if nameEnd > len(buf) {
			break
		}
		want, watched := names[int(ev.Wd)]
		if !watched || len(want) == 0 || ev.Len == 0 || ev.Mask&unix.IN_DELETE_SELF != 0 {
			return true
		}
		name := strings.TrimRight(string(buf[nameStart:nameEnd]), "\x00")
		for _, w := range want {
			if w == name {
				return true
			}
		}
		off = nameEnd
	}
	return false
}

func (k *kernel) process(pid int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.pidfds[pid]; ok || k.closing {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		k.wake() // gone already
		return nil
	}
	if err != nil {
		return errNoKernel // a kernel before 5.3
	}
	f, rc, err := pollable(fd, "pidfd")
	if err != nil {
		return err
	}
	k.pidfds[pid] = f
	go func() {
		// Read calls back until the pidfd is readable: the process has exited.
		_ = rc.Read(func(fd uintptr) bool { return readable(int32(fd)) }) //nolint:gosec // G115: a file descriptor fits in an int32
		k.wake()
	}()
	return nil
}

// readable reports whether fd is readable now, or cannot be asked. A poll
// interrupted by a signal (the Go runtime preempts with SIGURG) is asked
// again: taken for readiness, it would wake the waiter before the process
// exited and end the watch.
func readable(fd int32) bool {
	p := []unix.PollFd{{Fd: fd, Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(p, 0)
		if !errors.Is(err, unix.EINTR) {
			return err != nil || n > 0
		}
	}
}

// release stops every watch and returns at once. Closing an inotify
// descriptor waits until the kernel has retired its watches (an SRCU grace
// period: 0–16 ms, 12 ms median on the development machine), and no waiter
// needs to wait for that, so the descriptors are closed in the background.
func (k *kernel) release() {
	files := make([]*os.File, 0, len(k.pidfds)+1)
	if k.inotify != nil {
		files = append(files, k.inotify)
	}
	for _, f := range k.pidfds {
		files = append(files, f)
	}
	go func() {
		defer close(k.closed)
		for _, f := range files {
			k.closeFile(f)
		}
	}()
}
