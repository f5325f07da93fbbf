package monitor

import (
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// wakeups turns file-system and process events into wake-ups of the
// monitor loop: the session's state file being replaced (inotify on the
// sessions directory) and the runner process ending (a pidfd). Both wait in
// the Go netpoller, so an idle monitor uses no CPU and forks nothing.
type wakeups struct {
	C      chan struct{}
	dir    *os.File
	pidfds map[int]*os.File
	// closeFile closes one descriptor; tests stand in for it.
	closeFile func(*os.File)
	// closed is closed once every descriptor is.
	closed chan struct{}
}

func newWakeups() *wakeups {
	return &wakeups{C: make(chan struct{}, 1), pidfds: map[int]*os.File{},
		closeFile: func(f *os.File) { f.Close() }, closed: make(chan struct{})}
}

func (w *wakeups) wake() {
	select {
	case w.C <- struct{}{}:
	default:
	}
}

// watchStateFile wakes the loop whenever the session's state changes.
// Every writer (the runner, the Stop hook, the spawner, a sweep) changes it
// under the session's lock (sessionstate.Update), and the lock file is
// never replaced: its close after each update is the event. So a monitor
// hears of its own session only. Watching the sessions directory woke every
// monitor for every session's writes: n monitors whose children end at once
// took n² wake-ups. Without a lock file to watch, the directory is watched
// and the events are filtered by name.
func (w *wakeups) watchStateFile(dir, name string) error {
	if fd, err := inotifyOnLock(name + ".lock"); err == nil {
		f := os.NewFile(uintptr(fd), "inotify:"+name+".lock")
		w.dir = f
		go w.readInotify(f, func([]byte) bool { return true })
		return nil
	}
	fd, err := inotifyOn(dir)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "inotify:"+dir)
	w.dir = f
	base := filepath.Base(name)
	go w.readInotify(f, func(batch []byte) bool { return inotifyWakes(batch, base) })
	return nil
}

// inotifyOnLock opens a non-blocking inotify descriptor watching an existing
// lock file for its closes (each update of the state ends with one) and for
// its removal (the session's files being cleaned up).
func inotifyOnLock(lock string) (int, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return -1, err
	}
	mask := uint32(unix.IN_CLOSE_NOWRITE | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_DELETE_SELF |
		unix.IN_MOVE_SELF | unix.IN_DONT_FOLLOW)
	if _, err := unix.InotifyAddWatch(fd, lock, mask); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// inotifyOn opens a non-blocking inotify descriptor watching dir for files
// being written, created, renamed in or deleted.
func inotifyOn(dir string) (int, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return -1, err
	}
	mask := uint32(unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE | unix.IN_DELETE_SELF)
	if _, err := unix.InotifyAddWatch(fd, dir, mask); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func (w *wakeups) readInotify(f *os.File, wakes func(batch []byte) bool) {
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		n, err := f.Read(buf)
		if err != nil {
			return
		}
		if wakes(buf[:n]) {
			w.wake()
		}
	}
}

// inotifyWakes reports whether a batch of raw inotify events concerns the
// file base (or the watched directory going away).
func inotifyWakes(buf []byte, base string) bool {
	wakes := false
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		nameStart := off + unix.SizeofInotifyEvent
		nameEnd := nameStart + int(ev.Len)
		if nameEnd > len(buf) {
			break
		}
		evName := strings.TrimRight(string(buf[nameStart:nameEnd]), "\x00")
		if evName == base || ev.Mask&unix.IN_DELETE_SELF != 0 {
			wakes = true
		}
		off = nameEnd
	}
	return wakes
}

// watchProcess wakes the loop when pid exits. An error (old kernel, no such
// process) is harmless: the periodic look checks the pid too.
func (w *wakeups) watchProcess(pid int) error {
	if _, ok := w.pidfds[pid]; ok || pid <= 0 {
		return nil
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return err
	}
	w.pidfds[pid] = f
	go func() {
		// Read calls back until the pidfd is readable, i.e. the process has exited.
		_ = rc.Read(func(fd uintptr) bool {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(p, 0)
			return err != nil || n > 0
		})
		w.wake()
	}()
	return nil
}

// Close stops every watch and returns at once. Closing an inotify
// descriptor waits until the kernel has retired its watch (an SRCU grace
// period: 0–16 ms, 12 ms median on the development machine), and nobody
// needs to wait for that: not a run's next step, which follows a monitor
// that ran in-process. The descriptors are closed in the background.
func (w *wakeups) Close() {
	files := make([]*os.File, 0, len(w.pidfds)+1)
	if w.dir != nil {
		files = append(files, w.dir)
	}
	for _, f := range w.pidfds {
		files = append(files, f)
	}
	go func() {
		defer close(w.closed)
		for _, f := range files {
			w.closeFile(f)
		}
	}()
}
