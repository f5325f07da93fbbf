package bmad

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// Folder is the orchestrator.Backlog of BMAD 6.12's stories mode: the
// stories of one spec folder's stories.yaml, in its order, each depending
// on the one before (one story at a time, never past a blocked one). There
// is no board: a story is done when its spec (stories/<id>-*.md) is, and
// lands as one commit whose subject carries its id and title. The folder
// is the run's one epic, named after it; its retrospective takes the
// folder (-H <folder>).
type Folder struct {
	// Root is the project's root, Dir the spec folder (both absolute).
	Root, Dir string
	// Stories are stories.yaml's entries, in execution order.
	Stories []workflows.SpecStory
}

var (
	_ orchestrator.Backlog       = Folder{}
	_ orchestrator.RetroTargeter = Folder{}
)

// OpenFolder reads a spec folder's stories.yaml (workflows.ReadStories:
// stories_invalid with file, line and rule).
func OpenFolder(root, dir string) (Folder, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return Folder{}, err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	stories, err := workflows.ReadStories(dir)
	if err != nil {
		return Folder{}, err
	}
	return Folder{Root: root, Dir: filepath.Clean(dir), Stories: stories}, nil
}

// Rel is the folder relative to the project, slash-separated (absolute
// when it lies outside the project).
func (f Folder) Rel() string {
	r, err := filepath.Rel(f.Root, f.Dir)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(f.Dir)
	}
	return filepath.ToSlash(r)
}

// Epic is the run's one epic: the folder's name.
func (f Folder) Epic() string { return filepath.Base(f.Dir) }

// Entry is stories.yaml's entry of story id.
func (f Folder) Entry(id string) (workflows.SpecStory, bool) {
	for _, s := range f.Stories {
		if s.ID == id {
			return s, true
		}
	}
	return workflows.SpecStory{}, false
}

// Last reports whether id is the last story of the folder.
func (f Folder) Last(id string) bool {
	return len(f.Stories) > 0 && f.Stories[len(f.Stories)-1].ID == id
}

func (f Folder) info(i int) orchestrator.StoryInfo {
	s := f.Stories[i]
	info := orchestrator.StoryInfo{Key: s.ID, Dotted: s.ID, Epic: f.Epic(), Title: s.Title}
	if i > 0 {
		info.DependsOn = []string{f.Stories[i-1].ID}
	}
	if path, err := workflows.StorySpec(f.Dir, s.ID); err == nil && path != "" {
		info.HasFile = true
		info.Files = []string{f.rel(path)}
		if sp, err := workflows.ReadSpec(path); err == nil && sp.Status == workflows.SpecDone && !workflows.SentinelSpec(path, s.ID) {
			info.Status = orchestrator.StatusDone
		}
	}
	return info
}

func (f Folder) rel(path string) string {
	r, err := filepath.Rel(f.Root, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(r)
}

// Select is every story of the folder, in its order: stories mode runs
// them all (epic and spec select nothing here).
func (f Folder) Select(string, string) ([]orchestrator.StoryInfo, error) {
	return f.EpicStories(f.Epic())
}

// Story re-reads one story by id.
func (f Folder) Story(key string) (orchestrator.StoryInfo, error) {
	for i, s := range f.Stories {
		if s.ID == key {
			return f.info(i), nil
		}
	}
	return orchestrator.StoryInfo{}, fmt.Errorf("%w: no story %q in %s", workflows.ErrStoryNotFound, key, filepath.Join(f.Rel(), workflows.StoriesFile))
}

// EpicStories lists every story of the folder.
func (f Folder) EpicStories(string) ([]orchestrator.StoryInfo, error) {
	out := make([]orchestrator.StoryInfo, len(f.Stories))
	for i := range f.Stories {
		out[i] = f.info(i)
	}
	return out, nil
}

// RetroDone reports whether the folder has its RETROSPECTIVE.md.
func (f Folder) RetroDone(string) (bool, error) {
	_, err := os.Stat(filepath.Join(f.Dir, workflows.RetroFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// RetroTarget is the retrospective's -H argument: the folder.
func (f Folder) RetroTarget(string) string { return f.Rel() }

// MarkStoryDone does nothing: the worker's spec says done, and there is no board.
func (Folder) MarkStoryDone(string) error { return nil }

// StatusFile is none: stories mode has no board.
func (Folder) StatusFile() string { return "" }

// StatusForCommit leaves the (absent) board as committed.
func (Folder) StatusForCommit(committed []byte, _, _ string, _ bool) ([]byte, error) {
	return committed, nil
}

// StoryFileOwner is the story whose spec (stories/<id>-*.md) path is.
func (f Folder) StoryFileOwner(path string) (string, bool) {
	dir, name := filepath.ToSlash(filepath.Dir(filepath.FromSlash(path))), filepath.Base(path)
	if dir != f.Rel()+"/"+workflows.StoriesDir || !strings.HasSuffix(name, ".md") {
		return "", false
	}
	for _, s := range f.Stories {
		if strings.HasPrefix(name, s.ID+"-") {
			return s.ID, true
		}
	}
	return "", false
}

// FileList is none: a spec has no File List the run keeps.
func (Folder) FileList(string) []string { return nil }
