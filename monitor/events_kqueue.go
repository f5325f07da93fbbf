//go:build darwin || freebsd

package monitor

import (
	"errors"

	"github.com/story-automator/story-automator/internal/kq"
)

// wakeups turns kqueue events into wake-ups of the monitor loop: an entry of
// the sessions directory changing (the state file is replaced by rename; the
// loop re-reads it, so another file's change costs one read) and the runner
// process exiting. Without a kqueue the loop's periodic look still sees both.
type wakeups struct {
	C chan struct{}
	q *kq.Queue
}

func newWakeups() *wakeups {
	w := &wakeups{C: make(chan struct{}, 1)}
	if q, err := kq.New(); err == nil {
		w.q = q
		go func() {
			for q.Wait() {
				w.wake()
			}
		}()
	}
	return w
}

func (w *wakeups) wake() {
	select {
	case w.C <- struct{}{}:
	default:
	}
}

func (w *wakeups) watchStateFile(dir, name string) error {
	if w.q == nil {
		return nil
	}
	return w.q.WatchDir(dir)
}

// watchProcess wakes the loop when pid exits (at once when it is gone already).
func (w *wakeups) watchProcess(pid int) error {
	if w.q == nil || pid <= 0 {
		return nil
	}
	err := w.q.WatchProcess(pid)
	if errors.Is(err, kq.ErrNoProcess) {
		w.wake()
		return nil
	}
	return err
}

// Close ends the watches.
func (w *wakeups) Close() {
	if w.q != nil {
		w.q.Close()
	}
}
