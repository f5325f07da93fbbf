// Package wake wakes a waiter when a directory's entries change, a file
// changes or a process exits, with the waiter asleep in the kernel (inotify
// and pidfds on Linux, kqueue on macOS and FreeBSD) instead of polling.
package wake

import (
	"errors"
	"sync"
	"time"
)

// Waker sends a wake-up on C after a change to anything it watches. Wake-ups
// coalesce (C holds at most one) and say nothing of what changed: the waiter
// looks again at what it waits for. Where the kernel cannot watch something
// (no inotify, kqueue or pidfds), the Waker wakes once a second instead.
type Waker struct {
	C <-chan struct{}
	c chan struct{}

	mu     sync.Mutex
	kernel *kernel
	ticker *time.Ticker
	done   chan struct{}
}

// errNoKernel reports that the kernel offers no way to watch something here;
// the Waker falls back to its once-a-second tick.
var errNoKernel = errors.New("no kernel events")

// New returns a Waker that watches nothing yet; kernel resources are taken
// by the first watch that needs them.
func New() *Waker {
	c := make(chan struct{}, 1)
	w := &Waker{C: c, c: c}
	w.kernel = newKernel(w.wake)
	return w
}

func (w *Waker) wake() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// Dir wakes when an entry of dir is created, written, renamed in or out or
// removed, or dir itself goes away. Given names, only those entries' changes
// wake, where the kernel tells entries apart (inotify does; kqueue does not,
// so any entry's change wakes). A dir that cannot be opened is an error.
func (w *Waker) Dir(dir string, names ...string) error {
	return w.fallBack(w.kernel.dir(dir, names))
}

// FileClosesWake reports whether File wakes on the file being closed after
// use, not only written: inotify reports closes, kqueue does not.
const FileClosesWake = fileClosesWake

// File wakes when the file at path is written, has its metadata changed, or
// is removed or renamed; where FileClosesWake, also when it is closed after
// being opened (a lock file that is only ever locked and closed).
func (w *Waker) File(path string) error {
	return w.fallBack(w.kernel.file(path))
}

// Process wakes when pid exits, and at once when pid is gone already.
// Watching one pid twice is one watch.
func (w *Waker) Process(pid int) error {
	if pid <= 0 {
		return nil
	}
	return w.fallBack(w.kernel.process(pid))
}

// fallBack starts the once-a-second tick when the kernel could not watch.
func (w *Waker) fallBack(err error) error {
	if !errors.Is(err, errNoKernel) {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ticker == nil && w.done == nil {
		w.ticker, w.done = time.NewTicker(time.Second), make(chan struct{})
		go w.tick(w.ticker.C, w.done)
	}
	return nil
}

func (w *Waker) tick(c <-chan time.Time, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-c:
			w.wake()
		}
	}
}

// Close ends every watch and returns at once; C is not closed.
func (w *Waker) Close() {
	w.mu.Lock()
	if w.ticker != nil {
		w.ticker.Stop()
		close(w.done)
		w.ticker = nil
	}
	w.mu.Unlock()
	w.kernel.close()
}
