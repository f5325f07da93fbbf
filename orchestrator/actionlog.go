package orchestrator

import (
	"errors"
	"fmt"
	"sync"
)

// ActionLog adds lines to a run's action log from beside the run loop (how a
// notification went): through the engine while the run goes on, journalled
// as its own lines are; once the run has ended, straight into its state
// document, under the run lock. Safe for concurrent use; the zero value is
// ready and, until a run starts, refuses lines.
type ActionLog struct {
	mu    sync.Mutex
	eng   *Engine
	path  string
	root  string
	clock Clock
}

// attach sends lines through e, which runs the run of the document at path.
func (l *ActionLog) attach(e *Engine, root, path string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.eng, l.root, l.path, l.clock = e, root, path, e.Clock
}

// detach is called once the run has ended and let go of its lock: lines go
// into the document from now on.
func (l *ActionLog) detach() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.eng != nil && l.eng.Journal != nil {
		l.eng.Journal.Close() // a line since the run's end may have opened it again
	}
	l.eng = nil
}

// Add appends one line about unit and step ("" for the run as a whole).
func (l *ActionLog) Add(unit, step, msg string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.eng != nil {
		return l.eng.note(unit, step, msg)
	}
	if l.path == "" {
		return errors.New("the run has no state document")
	}
	lock, err := AcquireRunLock(l.root)
	if err != nil {
		return fmt.Errorf("add to the action log of %s: %w", l.path, err)
	}
	defer lock.Release()
	st, err := LoadState(l.path)
	if err != nil {
		return err
	}
	st.addLog(l.clock.Now(), unit, step, msg)
	return SaveState(l.path, st)
}

// note appends an action-log line from beside the loop and persists it.
func (e *Engine) note(unit, step, msg string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state.addLog(e.Clock.Now(), unit, step, msg)
	e.persistLocked(nil)
	return e.saveErr
}
