//go:build !linux

package dirwatch

import "time"

// Watch has no kernel events to wait on outside Linux: it wakes once a
// second and the waiter re-reads what it watches.
func Watch(dirs ...string) (*Watcher, error) {
	t := time.NewTicker(time.Second)
	c := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
				select {
				case c <- struct{}{}:
				default:
				}
			}
		}
	}()
	return &Watcher{C: c, close: func() { t.Stop(); close(done) }}, nil
}
