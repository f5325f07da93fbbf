package orchestrator

import (
	"fmt"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// StateDirName is story-automator's own directory inside a project.
const StateDirName = ".story-automator"

// RunLockPath is the lock a `run` holds for its whole life: the kernel drops
// it when the process dies, even by SIGKILL, so a killed run can be resumed
// at once while a live one can never be doubled.
func RunLockPath(root string) string {
	return filepath.Join(root, StateDirName, "run.lock")
}

// RunsDir holds the state documents of a project's runs.
func RunsDir(root string) string {
	return filepath.Join(root, StateDirName, "runs")
}

// RunLock is a held run lock.
type RunLock struct{ fl *flock.Flock }

// AcquireRunLock takes the project's run lock without waiting; ErrRunActive
// when another process holds it.
func AcquireRunLock(root string) (*RunLock, error) {
	if err := atomicfile.EnsureDir(filepath.Join(root, StateDirName), 0o700); err != nil {
		return nil, err
	}
	fl := flock.New(RunLockPath(root))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("run lock %s: %w", fl.Path(), err)
	}
	if !ok {
		return nil, fmt.Errorf("%w (the run lock %s is held)", ErrRunActive, fl.Path())
	}
	return &RunLock{fl: fl}, nil
}

// Release drops the lock.
func (l *RunLock) Release() {
	if l != nil && l.fl != nil {
		_ = l.fl.Unlock()
	}
}

// RunLockHeld reports whether some process holds the project's run lock.
func RunLockHeld(root string) bool {
	fl := flock.New(RunLockPath(root))
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		_ = fl.Unlock()
		return false
	}
	return true
}
