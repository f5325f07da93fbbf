package dirwatch

import (
	"os"

	"golang.org/x/sys/unix"
)

// Watch watches dirs (missing ones are skipped) for files written, appended
// to, created, renamed in or removed.
func Watch(dirs ...string) (*Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	mask := uint32(unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_MOVED_TO | unix.IN_CREATE | unix.IN_DELETE)
	for _, d := range dirs {
		_, _ = unix.InotifyAddWatch(fd, d, mask)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	c := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 16<<10)
		for {
			if _, err := f.Read(buf); err != nil {
				return
			}
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}()
	return &Watcher{C: c, close: func() { f.Close() }}, nil
}
