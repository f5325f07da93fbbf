package monitor

import (
	"path/filepath"

	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/sessionstate"
)

// watchState wakes the monitor whenever its session's state changes. Every
// writer (the runner, the Stop hook, the spawner, a sweep) changes it under
// the session's lock (sessionstate.Update), and the lock file is never
// replaced: where the kernel reports closes, the lock's close after each
// update is the event, so a monitor hears of its own session only (watching
// the sessions directory woke every monitor for every session's writes: n
// monitors whose children end at once took n² wake-ups). Otherwise, or
// before the lock file exists, the directory is watched for the state file.
func watchState(w *wake.Waker, dir, name string) error {
	path := sessionstate.StatePath(dir, name)
	if wake.FileClosesWake {
		if err := w.File(path + ".lock"); err == nil {
			return nil
		}
	}
	return w.Dir(dir, filepath.Base(path))
}
