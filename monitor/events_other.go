//go:build !linux && !darwin && !freebsd

package monitor

// wakeups on systems without inotify, pidfds or kqueue never fire: the
// monitor loop's periodic look (Deps.Tick, 1s by default) notices a
// state-file change or a runner exit on its next pass instead of at once.
type wakeups struct {
	C chan struct{}
}

func newWakeups() *wakeups { return &wakeups{C: make(chan struct{})} }

func (w *wakeups) watchStateFile(dir, name string) error { return nil }

func (w *wakeups) watchProcess(pid int) error { return nil }

// Close has nothing to release.
func (w *wakeups) Close() {}
