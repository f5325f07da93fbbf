package orchestrator

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/story-automator/story-automator/marker"
)

// ErrNotRunning: no live `run` process owns the project's marker.
var ErrNotRunning = errors.New("no run process is running in this project")

// StopRun asks the project's running `run` to stop, as Ctrl-C in its
// terminal does (SIGTERM): it kills its child sessions, records their
// attempts as interrupted and pauses, for `run --resume`. The process is the
// marker's owner, checked alive (pid and start time) before it is signalled.
func StopRun(root string, getenv func(string) string) (pid int, err error) {
	m, err := marker.NewStore(root, getenv).Read()
	if err != nil || m.Mode != marker.ModeStory || !marker.OwnerAlive(m) || m.OwnerPid <= 0 {
		return 0, ErrNotRunning
	}
	if err := syscall.Kill(m.OwnerPid, syscall.SIGTERM); err != nil {
		return m.OwnerPid, fmt.Errorf("stop the run (pid %d): %w", m.OwnerPid, err)
	}
	return m.OwnerPid, nil
}
