package stophook

import (
	"encoding/json"
	"fmt"
	"github.com/story-automator/story-automator/internal/atomicfile"
	"os"

	"github.com/story-automator/story-automator/marker"
)

// HistoryEntry is one line of the decision log (docs/loops.md).
type HistoryEntry struct {
	TS        string `json:"ts"`
	Session   string `json:"session"`
	Mode      string `json:"mode"`
	Decision  string `json:"decision"`
	Iteration int    `json:"iteration"`
	Blocks    int    `json:"blocks"`
	Reason    string `json:"reason"`
}

// appendHistory records an owner decision; locked says the marker lock is
// held, which is what makes rolling the file over safe.
func (s *Shell) appendHistory(store *marker.Store, in Input, m *marker.Marker, d Decision, locked bool) {
	if d.Kind == "" {
		return
	}
	path := store.HistoryPath()
	if locked {
		if err := RotateHistory(path); err != nil {
			s.Log.Warn("cannot roll the decision history over", "error", err)
		}
	}
	e := HistoryEntry{TS: marker.Timestamp(s.Now()), Session: in.SessionID, Decision: d.Kind, Reason: d.Reason}
	if m != nil {
		e.Mode = m.Mode
		e.Blocks = m.StopHookBlocks
		if m.Loop != nil {
			e.Iteration = m.Loop.Iteration
		}
	}
	if err := AppendHistory(path, e); err != nil {
		s.Log.Warn("cannot append to the decision history", "error", err)
	}
}

// AppendHistory appends one JSON line; O_APPEND keeps concurrent lines whole.
func AppendHistory(path string, e HistoryEntry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	// O_NOFOLLOW: the history is never written through a symlink.
	f, err := atomicfile.OpenRegular(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open history %s: %w", path, err)
	}
	defer f.Close()
	_, err = f.Write(append(data, '\n'))
	return err
}

// RotateHistory keeps one previous generation: a history of MaxHistoryBytes
// or more becomes <file>.1. Callers hold the marker lock, so no other writer
// comes between the size check and the rename.
func RotateHistory(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < MaxHistoryBytes {
		return nil //nolint:nilerr // nothing to rotate
	}
	if err := os.Rename(path, path+".1"); err != nil {
		return fmt.Errorf("rotate history %s: %w", path, err)
	}
	return nil
}

// MaxHistoryBytes is the size at which the history file rolls over to <file>.1.
const MaxHistoryBytes = 4 << 20
