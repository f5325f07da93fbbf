package workflows

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/filelock"
)

// sprintLockWait bounds how long an update waits for another writer.
const sprintLockWait = 10 * time.Second

// ReadSprintStatus reads <artifacts>/sprint-status.yaml (ErrSprintNotFound
// when it does not exist).
func (p *Layout) ReadSprintStatus() (*SprintStatus, error) {
	path := p.SprintStatusPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrSprintNotFound, p.Rel(path))
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ParseSprintStatus(path, data)
}

// UpdateSprintStatus runs fn on the current sprint status under an exclusive
// lock (<root>/.story-automator/sprint-status.lock, shared by every
// story-automator process) and writes the result atomically when it changed.
func (p *Layout) UpdateSprintStatus(fn func(*SprintStatus) error) error {
	unlock, err := p.lockSprint()
	if err != nil {
		return err
	}
	defer unlock()
	// Agents edit sprint-status.yaml directly, without our lock: if the file
	// changed while fn ran, start again from the new content rather than
	// overwrite the agent's edit.
	for attempt := 0; ; attempt++ {
		s, err := p.ReadSprintStatus()
		if err != nil {
			return err
		}
		if err := s.Rewritable(); err != nil {
			return err
		}
		before := string(s.Bytes())
		if err := fn(s); err != nil {
			return err
		}
		if string(s.Bytes()) == before {
			return nil
		}
		now, err := os.ReadFile(s.Path)
		if err != nil {
			return fmt.Errorf("re-read %s: %w", s.Path, err)
		}
		if string(now) != before && attempt < sprintRetries {
			continue
		}
		if string(now) != before {
			return fmt.Errorf("%w: %s keeps changing under us", ErrLockTimeout, s.Path)
		}
		perm := os.FileMode(0o644)
		if fi, err := os.Stat(s.Path); err == nil {
			perm = fi.Mode().Perm()
		}
		return atomicfile.Write(s.Path, s.Bytes(), perm)
	}
}

// sprintRetries bounds how often an update starts over because the file changed.
const sprintRetries = 5

func (p *Layout) lockSprint() (func(), error) {
	dir := filepath.Join(p.Root, StateDir)
	if err := atomicfile.EnsureDir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sprint-status lock: %w", err)
	}
	release, err := filelock.Acquire(context.Background(), filepath.Join(dir, "sprint-status.lock"), sprintLockWait)
	if errors.Is(err, filelock.ErrTimeout) {
		return nil, fmt.Errorf("%w after %s", ErrLockTimeout, sprintLockWait)
	}
	if err != nil {
		return nil, fmt.Errorf("lock sprint-status: %w", err)
	}
	return release, nil
}

// StoryStatus is where a story stands according to each source.
type StoryStatus struct {
	// Sprint is the sprint-status.yaml value, "" when the story has no entry.
	Sprint string
	// File is the story file's Status line, "" without one file holding one.
	File string
}

// Is reports whether either source says one of statuses.
func (s StoryStatus) Is(statuses ...string) bool {
	for _, st := range statuses {
		if s.Sprint == st || s.File == st {
			return true
		}
	}
	return false
}

// StoryStatus reads a story's status from sprint-status.yaml and from its
// story file; a missing sprint-status file or story file leaves that part "".
func (p *Layout) StoryStatus(k StoryKey) (StoryStatus, error) {
	all, err := p.storyStatuses([]StoryKey{k})
	if err != nil {
		return StoryStatus{}, err
	}
	return all[0], nil
}

// storyStatuses reads the status of several stories, reading sprint-status.yaml
// and listing the story files once.
func (p *Layout) storyStatuses(keys []StoryKey) ([]StoryStatus, error) {
	ss, _, err := p.sprintView()
	if err != nil && !errors.Is(err, ErrSprintNotFound) {
		return nil, err
	}
	index, err := p.storyFileIndex()
	if err != nil {
		return nil, err
	}
	out := make([]StoryStatus, len(keys))
	for i, k := range keys {
		if ss != nil {
			if e, ok := ss.Story(k); ok {
				out[i].Sprint = NormalizeStatus(e.Status)
			}
		}
		if files := index[k]; len(files) == 1 {
			v, ok, err := ReadStoryFileStatus(files[0])
			if err != nil {
				return nil, err
			}
			if ok {
				out[i].File = v
			}
		}
	}
	return out, nil
}

// SetStoryStatus sets a story's status in sprint-status.yaml (adding its entry
// when missing) and in its story file when it has exactly one. It fails when
// the story has neither, or several story files.
func (p *Layout) SetStoryStatus(k StoryKey, status string) error {
	if err := validStatus(status); err != nil {
		return err
	}
	files, err := p.StoryFiles(k)
	if err != nil {
		return err
	}
	if len(files) > 1 {
		_, err := p.StoryFile(k)
		return err
	}
	wroteSprint := false
	err = p.UpdateSprintStatus(func(s *SprintStatus) error {
		wroteSprint = true
		return s.SetStory(k, p.slugOf(k, files), status)
	})
	if err != nil && !errors.Is(err, ErrSprintNotFound) {
		return err
	}
	if len(files) == 1 {
		return SetStoryFileStatus(files[0], status)
	}
	if !wroteSprint {
		return fmt.Errorf("%w %s: no sprint-status.yaml and no story file", ErrStoryNotFound, k.Dotted())
	}
	return nil
}

// slugOf finds a story's slug: from its story file name, else from its title
// in the epics.
func (p *Layout) slugOf(k StoryKey, files []string) string {
	if len(files) == 1 {
		if _, slug, err := splitStoryKey(filepath.Base(files[0])); err == nil && slug != "" {
			return slug
		}
	}
	if epics, err := p.Epics(); err == nil {
		for _, e := range epics {
			for _, s := range e.Stories {
				if s.Key == k {
					return Slugify(s.Title)
				}
			}
		}
	}
	return ""
}
