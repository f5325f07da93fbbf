// Package dirwatch wakes a waiter when files in a few directories change,
// so a blocking wait (status --wait) sleeps in the kernel instead of polling.
package dirwatch

// Watcher delivers a coalesced wake-up on C after a change in a watched directory.
type Watcher struct {
	C     <-chan struct{}
	close func()
}

// Close stops the watcher.
func (w *Watcher) Close() {
	if w != nil && w.close != nil {
		w.close()
	}
}
