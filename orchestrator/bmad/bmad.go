// Package bmad is a run's view of a BMAD project on disk: its stories, their
// story files and File Lists, and sprint-status.yaml.
package bmad

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/lazyre"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// Files is the orchestrator.Backlog read from and written to a BMAD
// project's files on disk.
type Files struct {
	P *workflows.Layout
	// beforeEpicSync, when set, runs between reading an epic's stories and
	// updating the epic's entry (tests use it to race a parallel story).
	beforeEpicSync func()
}

// The run loop finds the optional capabilities by type assertion; these
// make a renamed method a compile error instead of a capability switched off.
var (
	_ orchestrator.Backlog        = Files{}
	_ orchestrator.FileListKeeper = Files{}
	_ orchestrator.EpicChecker    = Files{}
	_ orchestrator.TempSweeper    = Files{}
)

// StatusFile is sprint-status.yaml relative to the project root.
func (b Files) StatusFile() string {
	return b.rel(b.P.SprintStatusPath())
}

// StatusForCommit copies the unit's entry (the story's, or the epic's
// retrospective's) and the epic's entry from the work tree's sprint-status.yaml
// into committed; without a committed version the whole file is the unit's.
func (b Files) StatusForCommit(committed []byte, key, epic string, retro bool) ([]byte, error) {
	now, err := b.P.ReadSprintStatus()
	if err != nil {
		return nil, err
	}
	if committed == nil {
		return now.Bytes(), nil
	}
	base, err := workflows.ParseSprintStatus(now.Path, committed)
	if err != nil {
		return now.Bytes(), nil //nolint:nilerr // the committed file was broken: the work tree's is the fix
	}
	var story workflows.StoryKey
	if !retro {
		if story, err = workflows.ParseStoryKey(key); err != nil {
			return nil, err
		}
	}
	for _, e := range now.Entries() {
		mine := e.Key == "epic-"+epic || (retro && e.Key == "epic-"+epic+"-retrospective") || (!retro && e.IsStory() && e.Story == story)
		if !mine {
			continue
		}
		if e.IsStory() {
			err = base.SetStory(e.Story, e.Slug, e.Status)
		} else {
			err = base.Set(e.Key, e.Status)
		}
		if err != nil {
			return nil, fmt.Errorf("sprint status of %s for the commit: %w", key, err)
		}
	}
	if retro {
		// A retrospective's action items and stamp are its own (BMAD writes them).
		if err := base.CarryRetro(now); err != nil {
			return nil, fmt.Errorf("sprint status of %s for the commit: %w", key, err)
		}
	}
	return base.Bytes(), nil
}

// rel is a path relative to the project root, slash-separated.
func (b Files) rel(path string) string {
	return filepath.ToSlash(b.P.Rel(path))
}

// Select picks the run's stories with workflows.SelectStories.
func (b Files) Select(epic, spec string) ([]orchestrator.StoryInfo, error) {
	all, err := b.P.Stories()
	if err != nil {
		return nil, err
	}
	if spec == "all" {
		spec = ""
	}
	sel, err := workflows.SelectStories(all, epic, spec)
	if err != nil {
		return nil, err
	}
	out := make([]orchestrator.StoryInfo, 0, len(sel))
	for _, s := range sel {
		info, err := b.info(s)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// Story re-reads one story by canonical key.
func (b Files) Story(key string) (orchestrator.StoryInfo, error) {
	k, err := workflows.ParseStoryKey(key)
	if err != nil {
		return orchestrator.StoryInfo{}, err
	}
	s, err := b.P.Story(k)
	if err != nil {
		return orchestrator.StoryInfo{}, err
	}
	return b.info(s)
}

// EpicStories lists every story of an epic.
func (b Files) EpicStories(epic string) ([]orchestrator.StoryInfo, error) {
	all, err := b.P.Stories()
	if err != nil {
		return nil, err
	}
	var out []orchestrator.StoryInfo
	for _, s := range all {
		if s.Key.Epic != epic {
			continue
		}
		info, err := b.info(s)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// RetroDone reports whether sprint-status.yaml has the epic's retrospective done.
func (b Files) RetroDone(epic string) (bool, error) {
	ss, err := b.P.ReadSprintStatus()
	if errors.Is(err, workflows.ErrSprintNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range ss.Entries() {
		if e.Key == "epic-"+epic+"-retrospective" {
			return workflows.NormalizeStatus(e.Status) == workflows.StatusDone, nil
		}
	}
	return false, nil
}

// MarkStoryDone sets the story done in sprint-status.yaml and its story file,
// and moves the epic's own entry along: in-progress while some of its stories
// are not done, done once all are.
func (b Files) MarkStoryDone(key string) error {
	k, err := workflows.ParseStoryKey(key)
	if err != nil {
		return err
	}
	if err := b.P.SetStoryStatus(k, workflows.StatusDone); err != nil {
		return err
	}
	return b.syncEpicStatus(k.Epic)
}

// syncEpicStatus sets the epic's entry from its stories' entries as read
// under the sprint-status lock, so parallel stories finishing together leave
// the epic done. A story without a done entry counts as its story file says.
// The epic is in progress as soon as one story is not done, so the story
// files are read only until one is found: a commit costs the same with 200
// stories as with 10.
func (b Files) syncEpicStatus(epic string) error {
	all, err := b.P.Stories()
	if err != nil && !errors.Is(err, workflows.ErrSprintNotFound) {
		return err
	}
	var keys []workflows.StoryKey
	for _, s := range all {
		if s.Key.Epic == epic {
			keys = append(keys, s.Key)
		}
	}
	if b.beforeEpicSync != nil {
		b.beforeEpicSync()
	}
	err = b.P.UpdateSprintStatus(func(ss *workflows.SprintStatus) error {
		// The epic's stories: those read above and any entry added since.
		for _, e := range ss.Entries() {
			if e.IsStory() && e.Story.Epic == epic && !slices.Contains(keys, e.Story) {
				keys = append(keys, e.Story)
			}
		}
		want := workflows.StatusDone
		for _, k := range keys {
			if e, ok := ss.Story(k); ok && workflows.NormalizeStatus(e.Status) == workflows.StatusDone {
				continue
			}
			if st, err := b.P.StoryStatus(k); err == nil && st.File == workflows.StatusDone {
				continue
			}
			want = workflows.StatusInProgress
			break
		}
		for _, e := range ss.Entries() {
			if e.Key == "epic-"+epic && workflows.NormalizeStatus(e.Status) != want {
				return ss.Set(e.Key, want)
			}
		}
		return nil // no entry for the epic, or already right: leave the file alone
	})
	if errors.Is(err, workflows.ErrSprintNotFound) {
		return nil
	}
	return err
}

// info combines what sprint-status.yaml, the story file and the epics say.
// A story either source calls done is done; one either calls review is in review.
func (b Files) info(s workflows.Story) (orchestrator.StoryInfo, error) {
	st, err := b.P.StoryStatus(s.Key)
	if err != nil {
		return orchestrator.StoryInfo{}, fmt.Errorf("status of story %s: %w", s.Key.Dotted(), err)
	}
	files, err := b.P.StoryFiles(s.Key)
	if err != nil {
		return orchestrator.StoryInfo{}, err
	}
	status := st.Sprint
	switch {
	case st.Is(workflows.StatusDone):
		status = workflows.StatusDone
	case st.Is(workflows.StatusReview):
		status = workflows.StatusReview
	case status == "":
		status = st.File
	}
	info := orchestrator.StoryInfo{Key: s.Key.String(), Dotted: s.Key.Dotted(), Epic: s.Key.Epic, Title: s.Title,
		Status: status, HasFile: len(files) > 0}
	for _, f := range files {
		info.Files = append(info.Files, b.rel(f))
		info.FileList = append(info.FileList, fileList(f)...)
	}
	for _, d := range s.DependsOn {
		info.DependsOn = append(info.DependsOn, d.String())
	}
	return info, nil
}

// fileList reads the paths a story file's "File List" section names (the
// BMAD dev agent lists there every file it changed), one "- path" item per
// line, backticks and a trailing note such as "(new)" dropped.
func fileList(storyFile string) []string {
	data, err := os.ReadFile(storyFile)
	if err != nil {
		return nil
	}
	var out []string
	level := 0
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if h := len(t) - len(strings.TrimLeft(t, "#")); h > 0 && strings.HasPrefix(t[h:], " ") {
			switch {
			case strings.EqualFold(strings.TrimSpace(t[h:]), "file list"):
				level = h
			case level > 0 && h <= level:
				level = 0
			}
			continue
		}
		item, ok := strings.CutPrefix(t, "- ")
		if level == 0 || !ok {
			continue
		}
		if f := strings.Fields(strings.Trim(item, "`")); len(f) > 0 {
			p := path.Clean(strings.Trim(f[0], "`"))
			if p != "." && !strings.HasPrefix(p, "../") && !path.IsAbs(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// CheckEpicStory fails with a Blocker (epics_not_found, story_not_in_epics)
// when the epics are missing or do not declare the story.
func (b Files) CheckEpicStory(key string) error {
	k, err := workflows.ParseStoryKey(key)
	if err != nil {
		return err
	}
	_, err = b.P.EpicStory(k)
	if errors.Is(err, workflows.ErrEpicsNotFound) || errors.Is(err, workflows.ErrStoryNotInEpics) {
		return &orchestrator.Blocker{Code: workflows.Code(err), Err: err,
			Action: fmt.Sprintf("Declare story %s in the epics (a \"### Story %s: <title>\" section with its acceptance criteria), or write its story file by hand (create is then skipped), then run `story-automator run --resume`.",
				k.Dotted(), k.Dotted())}
	}
	return err
}

// StoryFileOwner tells from its path alone whether path (project-relative,
// slash-separated) is a story file, and whose: a *.md file in the artifacts
// directory or its stories/ subdirectory named by a story key, as
// workflows.Layout.StoryFiles finds them.
func (b Files) StoryFileOwner(rel string) (string, bool) {
	abs := filepath.Join(b.P.Root, filepath.FromSlash(rel))
	dir, name := filepath.Split(abs)
	dir = filepath.Clean(dir)
	if !strings.HasSuffix(name, ".md") || (dir != b.P.ArtifactsDir && dir != filepath.Join(b.P.ArtifactsDir, "stories")) {
		return "", false
	}
	k, err := workflows.ParseStoryKey(name)
	if err != nil {
		return "", false
	}
	return k.String(), true
}

// KeepFileList adds to the story file's File List the paths of its commit
// it does not name yet (never the story file itself or sprint-status.yaml).
// A story with no story file, or several, is left alone.
func (b Files) KeepFileList(key string, paths []string) (string, []string, error) {
	k, err := workflows.ParseStoryKey(key)
	if err != nil {
		return "", nil, err
	}
	files, err := b.P.StoryFiles(k)
	if err != nil || len(files) != 1 {
		return "", nil, nil //nolint:nilerr // no single story file: nothing to read a File List from
	}
	rel, err := filepath.Rel(b.P.Root, files[0])
	if err != nil {
		return "", nil, err
	}
	rel = filepath.ToSlash(rel)
	var want []string
	for _, p := range paths {
		if p != rel && p != b.StatusFile() {
			want = append(want, p)
		}
	}
	if len(want) == 0 {
		return "", nil, nil
	}
	added, err := workflows.AddToFileList(files[0], want)
	if err != nil || len(added) == 0 {
		return "", nil, err
	}
	return rel, added, nil
}

// FileList reads the File List of the story's story files.
func (b Files) FileList(key string) []string {
	k, err := workflows.ParseStoryKey(key)
	if err != nil {
		return nil
	}
	files, err := b.P.StoryFiles(k)
	if err != nil {
		return nil
	}
	var out []string
	for _, f := range files {
		out = append(out, fileList(f)...)
	}
	return out
}

// storyFileName is the name of a BMAD story file: <epic>-<n>-<slug>.md.
var storyFileName = lazyre.New(`^[A-Za-z0-9_]+-\d+-[A-Za-z0-9_.-]+\.md$`)

// SweepTemps removes the temps of sprint-status.yaml and the story files.
func (b Files) SweepTemps() []string {
	return atomicfile.SweepTemps(b.P.ArtifactsDir, func(t string) bool {
		return t == "sprint-status.yaml" || storyFileName().MatchString(t)
	})
}
