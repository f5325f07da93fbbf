//go:build !linux && !darwin && !freebsd

package dirwatch

// Watch has no kernel events to wait on here: see tickerWatch.
func Watch(dirs ...string) (*Watcher, error) { return tickerWatch() }
