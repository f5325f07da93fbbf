//go:build darwin || freebsd

package dirwatch

import "github.com/story-automator/story-automator/internal/kq"

// Watch watches dirs (missing ones are skipped) with kqueue for entries
// created, renamed in, written or removed; without a kqueue it falls back to
// waking once a second.
func Watch(dirs ...string) (*Watcher, error) {
	q, err := kq.New()
	if err != nil {
		return tickerWatch()
	}
	for _, d := range dirs {
		_ = q.WatchDir(d)
	}
	c := make(chan struct{}, 1)
	go func() {
		for q.Wait() {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}()
	return &Watcher{C: c, close: q.Close}, nil
}
