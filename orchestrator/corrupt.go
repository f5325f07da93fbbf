package orchestrator

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/marker"
)

// A state document or journal that cannot be read back is moved aside
// ("<name>.corrupt-<UTC time>", see atomicfile.MoveAside) by a process that
// holds the run lock — so no run is writing it — with a warning saying
// where, and the process goes on without it where that is safe: a new run
// starts, `status` shows the next document. A --resume of the run the
// marker names cannot go on: it fails with state_corrupt, the document
// kept aside for the user.

// stateLoader reads state documents; one whose process holds the run lock
// moves corrupt ones aside and collects what it did as warnings.
type stateLoader struct {
	moveAside bool
	now       func() time.Time
	warnings  []string
}

// stateMovedAside is a corrupt state document that was moved aside
// (ErrStateCorrupt); its message says where.
type stateMovedAside struct{ msg string }

func (s *stateMovedAside) Error() string        { return s.msg }
func (s *stateMovedAside) Is(target error) bool { return target == ErrStateCorrupt }

// load reads the document at path. A corrupt journal whose document is
// sound loses only its unreadable tail: the changes before the bad line are
// kept in a new checkpoint and the journal is moved aside. A corrupt
// document is moved aside with its journal, and the error says so.
func (l *stateLoader) load(path string) (*State, error) {
	st, err := LoadState(path)
	if err == nil || !l.moveAside || !errors.Is(err, ErrStateCorrupt) {
		return st, err
	}
	now := l.now()
	var jc *journalCorrupt
	if errors.As(err, &jc) {
		to, merr := atomicfile.MoveAside(jc.path, now)
		if merr != nil {
			return nil, errors.Join(err, merr)
		}
		if serr := SaveState(path, jc.state); serr != nil {
			return nil, errors.Join(err, serr)
		}
		l.warn(fmt.Sprintf("the journal %s was corrupt at line %d (%v); moved it aside to %s and kept the run's changes before that line",
			jc.path, jc.line, jc.err, to))
		return jc.state, nil
	}
	to, merr := atomicfile.MoveAside(path, now)
	if merr != nil {
		return nil, errors.Join(err, merr)
	}
	msg := fmt.Sprintf("%v; moved it aside to %s", err, to)
	if jto, jerr := atomicfile.MoveAside(JournalPath(path), now); jerr == nil {
		msg += " (its journal to " + jto + ")"
	} else if !errors.Is(jerr, fs.ErrNotExist) {
		msg += fmt.Sprintf(" (its journal stays: %v)", jerr)
	}
	l.warn(msg)
	return nil, &stateMovedAside{msg: msg}
}

func (l *stateLoader) warn(msg string) { l.warnings = append(l.warnings, msg) }

// ReadLatestState reads the state document `status` shows (LatestState).
// A corrupt one is moved aside when no run holds the project, and the next
// document is read instead; while a run holds it, it is only reported (that
// run rewrites it at its next checkpoint). path is "" when the project has
// no readable run; warnings say what was found corrupt and what was done.
func ReadLatestState(store *marker.Store, root string, now func() time.Time) (st *State, path string, warnings []string) {
	for range 20 { // each pass moves one document aside
		path = LatestState(store, root)
		if path == "" {
			return nil, "", warnings
		}
		st, err := LoadState(path)
		if err == nil || !errors.Is(err, ErrStateCorrupt) {
			return st, path, warnings
		}
		lock, lerr := AcquireRunLock(root)
		if lerr != nil {
			return nil, path, append(warnings, fmt.Sprintf("%v (left in place: a run holds the project and rewrites it at its next checkpoint)", err))
		}
		l := stateLoader{moveAside: true, now: now}
		st, err = l.load(path)
		lock.Release()
		warnings = append(warnings, l.warnings...)
		if err == nil || !errors.Is(err, ErrStateCorrupt) {
			return st, path, warnings
		}
	}
	return nil, path, warnings
}
