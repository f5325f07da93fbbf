package orchestrator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// A run's state is kept in two files, so a change costs what the change is,
// not what the run is:
//
//   - the state document (SaveState): markdown plus the whole machine state,
//     replaced atomically at a checkpoint, with the sequence number of the
//     last change it holds (State.Seq);
//   - its journal, <document>.journal: one JSON line per change since that
//     checkpoint (the run's own fields, the one unit that changed, the log
//     lines added), appended and synced before the run acts on the change.
//
// LoadState reads the document and replays the journal's changes numbered
// after it, so a run killed at any moment resumes from its last change. A
// checkpoint writes the document first and removes the journal after: a
// journal that outlives a checkpoint holds only changes the document has.

// JournalSuffix names a state document's journal.
const JournalSuffix = ".journal"

// JournalPath is the journal of the state document at path.
func JournalPath(doc string) string { return doc + JournalSuffix }

// journalRecord is one change.
type journalRecord struct {
	Seq int64     `json:"seq"`
	Run runFields `json:"run"`
	// Unit is the changed unit, whole; nil when only the run's own fields
	// or its log changed.
	Unit *Unit `json:"unit,omitempty"`
	// LogFrom is the index in the log of the first of Log's lines.
	LogFrom int        `json:"logFrom"`
	Log     []LogEntry `json:"log,omitempty"`
}

// runFields are the State's own fields: everything but units and log.
type runFields struct {
	Status      string      `json:"status"`
	UpdatedAt   string      `json:"updatedAt"`
	FinishedAt  string      `json:"finishedAt,omitempty"`
	PauseReason string      `json:"pauseReason,omitempty"`
	Config      RunConfig   `json:"config"`
	Escalation  *Escalation `json:"escalation,omitempty"`
	ActiveMs    int64       `json:"activeMs,omitempty"`
	Wait        *LimitWait  `json:"wait,omitempty"`
	// Limited is the whole map: it is small.
	Limited map[string]*AgentLimit `json:"limited,omitempty"`
}

func fieldsOf(s *State) runFields {
	return runFields{Status: s.Status, UpdatedAt: s.UpdatedAt, FinishedAt: s.FinishedAt, PauseReason: s.PauseReason,
		Config: s.Config, Escalation: s.Escalation, ActiveMs: s.ActiveMs, Wait: s.Wait, Limited: s.Limited}
}

func (r *journalRecord) apply(s *State) {
	s.Seq = r.Seq
	f := r.Run
	s.Status, s.UpdatedAt, s.FinishedAt, s.PauseReason, s.Config, s.Escalation, s.ActiveMs =
		f.Status, f.UpdatedAt, f.FinishedAt, f.PauseReason, f.Config, f.Escalation, f.ActiveMs
	s.Wait, s.Limited = f.Wait, f.Limited
	if r.Unit != nil {
		replaced := false
		for i, u := range s.Units {
			if u.Key == r.Unit.Key && u.Kind == r.Unit.Kind {
				s.Units[i], replaced = r.Unit, true
				break
			}
		}
		if !replaced {
			s.Units = append(s.Units, r.Unit)
		}
	}
	s.Log = append(s.Log[:min(r.LogFrom, len(s.Log))], r.Log...)
}

// Journal persists one run's state: Change appends a change to the
// journal, Checkpoint rewrites the document. Callers serialise their calls
// (the engine holds its lock).
type Journal struct {
	// Path is the state document's.
	Path string

	mu     sync.Mutex
	f      *os.File
	logged int  // log lines the document or the journal already hold
	dirty  bool // changes since the last checkpoint
}

// NewJournal returns the journal of the state document at path.
func NewJournal(path string) *Journal { return &Journal{Path: path} }

// Checkpoint writes the whole state as the document and drops the journal.
func (j *Journal) Checkpoint(s *State) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := SaveState(j.Path, s); err != nil {
		return err
	}
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
	j.logged, j.dirty = len(s.Log), false
	return nil
}

// Dirty reports whether changes were journalled since the last checkpoint.
func (j *Journal) Dirty() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.dirty
}

// Change records a change of unit u (nil: of the run's own fields or log
// only) and syncs it to disk before returning.
func (j *Journal) Change(s *State, u *Unit) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		if err := j.open(); err != nil {
			return err
		}
	}
	s.Seq++
	rec := journalRecord{Seq: s.Seq, Run: fieldsOf(s), Unit: u, LogFrom: min(j.logged, len(s.Log))}
	rec.Log = s.Log[rec.LogFrom:]
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode run state change: %w", err)
	}
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", j.f.Name(), err)
	}
	if err := datasync(j.f); err != nil {
		return fmt.Errorf("sync %s: %w", j.f.Name(), err)
	}
	j.logged, j.dirty = len(s.Log), true
	return nil
}

// open starts the journal after a checkpoint: a new file, its directory
// entry synced, so the changes written to it survive a crash.
func (j *Journal) open() error {
	path := JournalPath(j.Path)
	if err := atomicfile.EnsureDir(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("open run journal: %w", err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return err
	}
	j.f = f
	return nil
}

// Close releases the journal file; the state stays as last written.
func (j *Journal) Close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// replayJournal applies to s the changes of the document's journal that
// the document does not hold yet. A last line without its newline was cut
// short by a kill while it was written, before the run could act on it,
// and is ignored.
func replayJournal(doc string, s *State) error {
	data, err := os.ReadFile(JournalPath(doc))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read run journal: %w", err)
	}
	for n := 1; ; n++ {
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return nil
		}
		var rec journalRecord
		if err := json.Unmarshal(data[:end], &rec); err != nil {
			return &journalCorrupt{path: JournalPath(doc), line: n, err: err, state: s}
		}
		if rec.Seq > s.Seq {
			rec.apply(s)
		}
		data = data[end+1:]
	}
}

// journalCorrupt is a journal line that cannot be read back (ErrStateCorrupt);
// state holds the document with the changes of the lines before it.
type journalCorrupt struct {
	path  string
	line  int
	err   error
	state *State
}

func (j *journalCorrupt) Error() string {
	return fmt.Sprintf("%v: %s line %d: %v", ErrStateCorrupt, j.path, j.line, j.err)
}

func (j *journalCorrupt) Is(target error) bool { return target == ErrStateCorrupt }
