package marker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/filelock"
)

// Environment variables that move the marker or bound its lock.
const (
	EnvMarkerPath  = "STORY_AUTOMATOR_ACTIVE_MARKER"
	EnvLockTimeout = "STORY_AUTOMATOR_LOCK_TIMEOUT"
	DefaultRelPath = ".claude/.story-automator-active"
	// DefaultLockTimeout bounds how long any command waits for the marker lock.
	DefaultLockTimeout = 5 * time.Second
	// maxMarkerBytes bounds what we read; a real marker is a few hundred bytes.
	maxMarkerBytes = 1 << 20
)

// Errors with stable codes (see Code).
var (
	ErrNotFound    = errors.New("no marker")
	ErrCorrupt     = errors.New("marker is corrupt")
	ErrSymlink     = errors.New("marker path is a symlink")
	ErrLockTimeout = errors.New("timed out waiting for the marker lock")
	ErrExists      = errors.New("an active marker already exists")
)

// Code maps an error from this package to the snake_case code users see.
func Code(err error) string {
	switch {
	case errors.Is(err, ErrNotFound):
		return "marker_not_found"
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrNotObject):
		return "marker_corrupt"
	case errors.Is(err, ErrSymlink), errors.Is(err, atomicfile.ErrSymlink):
		return "marker_symlink"
	case errors.Is(err, ErrLockTimeout):
		return "marker_locked"
	case errors.Is(err, ErrExists):
		return "marker_exists"
	default:
		return "marker_io"
	}
}

// Store reads and changes one marker file under its sidecar lock.
type Store struct {
	Path        string
	LockTimeout time.Duration
}

// ResolvePath returns the marker path for a project: $STORY_AUTOMATOR_ACTIVE_MARKER
// (relative to the project root) or <root>/.claude/.story-automator-active.
func ResolvePath(projectRoot string, getenv func(string) string) string {
	p := DefaultRelPath
	if getenv != nil {
		if v := getenv(EnvMarkerPath); v != "" {
			p = v
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(projectRoot, p)
	}
	return filepath.Clean(p)
}

// NewStore returns the store for a project, honouring the marker environment variables.
func NewStore(projectRoot string, getenv func(string) string) *Store {
	s := &Store{Path: ResolvePath(projectRoot, getenv), LockTimeout: DefaultLockTimeout}
	if getenv != nil {
		if d, err := time.ParseDuration(getenv(EnvLockTimeout)); err == nil && d > 0 {
			s.LockTimeout = d
		}
	}
	return s
}

// LockPath is the sidecar lock file; the marker itself is replaced by rename, so it cannot carry the lock.
func (s *Store) LockPath() string { return s.Path + ".lock" }

// Dir is the directory holding the marker, its lock and the history file.
func (s *Store) Dir() string { return filepath.Dir(s.Path) }

// HistoryFile is the name of the Stop hook's decision log, kept next to the
// marker (docs/loops.md).
const HistoryFile = "story-automator.history.jsonl"

// HistoryPath is the Stop hook's decision log beside this marker.
func (s *Store) HistoryPath() string { return filepath.Join(s.Dir(), HistoryFile) }

// Read returns the marker without taking the lock. Readers never see a torn
// marker because writers replace it by rename.
func (s *Store) Read() (*Marker, error) {
	data, err := s.readRaw()
	if err != nil {
		return nil, err
	}
	m, err := Decode(data)
	if err != nil {
		if errors.Is(err, ErrNotObject) {
			return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, s.Path, err)
	}
	return m, nil
}

func (s *Store) readRaw() ([]byte, error) {
	f, err := atomicfile.OpenRegular(s.Path, os.O_RDONLY, 0)
	if err != nil {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, ErrNotFound
		case errors.Is(err, syscall.ELOOP):
			return nil, fmt.Errorf("%w: %s", ErrSymlink, s.Path)
		case errors.Is(err, atomicfile.ErrNotRegular):
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return nil, fmt.Errorf("read marker %s: %w", s.Path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMarkerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read marker %s: %w", s.Path, err)
	}
	if len(data) > maxMarkerBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrCorrupt, s.Path, maxMarkerBytes)
	}
	return data, nil
}

// Lock takes the exclusive sidecar lock, waiting at most LockTimeout.
// The returned function releases it.
func (s *Store) Lock(ctx context.Context) (func(), error) {
	lp := s.LockPath()
	if fi, err := os.Lstat(lp); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: lock file %s", ErrSymlink, lp)
	}
	if fi, err := os.Lstat(s.Path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: %s", ErrSymlink, s.Path)
	}
	wait := s.LockTimeout
	if wait <= 0 {
		wait = DefaultLockTimeout
	}
	release, err := filelock.Acquire(ctx, lp, wait)
	if errors.Is(err, filelock.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s after %s", ErrLockTimeout, lp, wait)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// No directory for the lock file: there is no marker either.
		return nil, fmt.Errorf("%w: %s (its directory does not exist)", ErrNotFound, s.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("lock marker %s: %w", lp, err)
	}
	return release, nil
}

// Write replaces the marker atomically with mode 0600. Callers hold the lock
// (see Lock); everyone else uses Update, Modify or Create.
func (s *Store) Write(m *Marker) error {
	data, err := m.Encode()
	if err != nil {
		return fmt.Errorf("encode marker: %w", err)
	}
	if err := atomicfile.Write(s.Path, data, 0o600); err != nil {
		if errors.Is(err, atomicfile.ErrSymlink) {
			return fmt.Errorf("%w: %s", ErrSymlink, s.Path)
		}
		return err
	}
	return nil
}

// Update runs fn on the current marker under the lock and writes the result.
// fn sees ErrNotFound or ErrCorrupt through the error argument and decides;
// returning a nil marker means "write nothing". A corrupt marker is never
// overwritten unless fn returns a marker for it explicitly.
func (s *Store) Update(ctx context.Context, fn func(m *Marker, readErr error) (*Marker, error)) (*Marker, error) {
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, readErr := s.Read()
	if readErr != nil && !errors.Is(readErr, ErrNotFound) && !errors.Is(readErr, ErrCorrupt) {
		return nil, readErr
	}
	next, err := fn(cur, readErr)
	if err != nil {
		return nil, err
	}
	if next == nil {
		return cur, nil
	}
	if next.Version == 0 {
		next.Version = SchemaVersion
	}
	if err := s.Write(next); err != nil {
		return nil, err
	}
	return next, nil
}

// Modify is Update for the common case: the marker must exist and be valid.
func (s *Store) Modify(ctx context.Context, fn func(m *Marker) error) (*Marker, error) {
	return s.Update(ctx, func(m *Marker, readErr error) (*Marker, error) {
		if readErr != nil {
			return nil, readErr
		}
		if err := fn(m); err != nil {
			return nil, err
		}
		return m, nil
	})
}

// Create writes a new marker. It refuses to replace an active one unless force
// is set, and never replaces a corrupt one silently: force is needed there too.
func (s *Store) Create(ctx context.Context, m *Marker, force bool) (*Marker, error) {
	if err := atomicfile.EnsureDir(s.Dir(), 0o700); err != nil {
		return nil, err
	}
	// A writer killed mid-write leaves its temp file; a new run sweeps them.
	atomicfile.RemoveStaleTemps(s.Path, time.Minute)
	return s.Update(ctx, func(cur *Marker, readErr error) (*Marker, error) {
		if !force {
			if errors.Is(readErr, ErrCorrupt) {
				return nil, readErr
			}
			if cur != nil && cur.Active() {
				return nil, fmt.Errorf("%w at %s (use --force to replace it)", ErrExists, s.Path)
			}
		}
		return m, nil
	})
}

// Remove deletes the marker under the lock. Removing a missing marker is not an error.
func (s *Store) Remove(ctx context.Context) (existed bool, err error) {
	if _, err := os.Lstat(s.Dir()); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	return s.RemoveLocked()
}

// RemoveLocked deletes the marker; callers hold the lock.
func (s *Store) RemoveLocked() (existed bool, err error) {
	if fi, err := os.Lstat(s.Path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return false, fmt.Errorf("%w: %s", ErrSymlink, s.Path)
	}
	if err := os.Remove(s.Path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("remove marker %s: %w", s.Path, err)
	}
	return true, atomicfile.SyncDir(s.Dir())
}

// Pause pauses the marker under its lock (`marker pause`, the dashboard's
// pause key): the Stop hook stops guarding the run, and a `run` holding
// it stops after its current steps.
func (s *Store) Pause(ctx context.Context, reason string) (*Marker, error) {
	return s.Modify(ctx, func(m *Marker) error { m.Pause(reason); return nil })
}
