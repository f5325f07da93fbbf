//go:build !linux

package dirwatch

import "time"

// tickerWatch is the watch of a system with no kernel events to wait on (or
// whose kqueue could not be opened): it wakes once a second and the waiter
// re-reads what it watches.
func tickerWatch() (*Watcher, error) {
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
