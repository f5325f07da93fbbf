package agentsim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/story-automator/story-automator/workflows"
)

// The words of a folder+id dispatch: `Spec folder: <folder>. Story id: <id>.`
const (
	folderDispatchLead = "Spec folder:"
	folderDispatchID   = "Story id:"
)

// Blocking conditions of a folder+id dispatch, as BMAD 6.12's worker writes them.
const (
	condNoStoriesYAML   = "no stories.yaml found"
	condUnknownStoryID  = "story id not found in stories.yaml"
	condAmbiguousStory  = "ambiguous story file match"
	condAlreadyBlocked  = "story already blocked"
	condUnknownStatus   = "unrecognized status in existing story file"
	condNoEpicSpec      = "no epic spec found"
	folderSpecFile      = "SPEC.md"
	folderStoriesDir    = "stories"
	sentinelUnresolved  = "unresolved"
	sentinelAmbiguous   = "ambiguous"
	callerContextHeader = "## Planning context from the caller"
)

// parseFolderDispatch reads `Spec folder: <folder>. Story id: <id>.` (the
// folder may hold dots; the id ends at its full stop).
func parseFolderDispatch(arg string) (folder, id string, ok bool) {
	rest, found := strings.CutPrefix(arg, folderDispatchLead)
	if !found {
		return "", "", false
	}
	folder, id, found = strings.Cut(rest, folderDispatchID)
	folder = strings.TrimSuffix(strings.TrimSpace(folder), ".")
	id = strings.TrimSuffix(strings.TrimSpace(id), ".")
	if !found || folder == "" || id == "" || strings.ContainsAny(id, " \t/") {
		return "", "", false
	}
	return strings.TrimSpace(folder), id, true
}

// folderEntry is what the worker reads of a stories.yaml entry: its id,
// title and description, never the caller's fields.
type folderEntry struct {
	ID          string `yaml:"id"`
	Title       string `yaml:"title"`
	Description string `yaml:"description"`
}

// readFolderEntries parses a spec folder's stories.yaml as the worker does:
// any list it can read, the caller's schema not enforced.
func readFolderEntries(folder string) ([]folderEntry, error) {
	data, err := os.ReadFile(filepath.Join(folder, workflows.StoriesFile))
	if err != nil {
		return nil, err
	}
	var entries []folderEntry
	if err := yaml.Unmarshal(data, &entries); err != nil {
		return nil, err
	}
	return entries, nil
}

// storyFiles lists the files matching <folder>/stories/<id>-*.md, sorted.
func storyFiles(folder, id string) ([]string, error) {
	dir := filepath.Join(folder, folderStoriesDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasPrefix(e.Name(), id+"-") && strings.HasSuffix(e.Name(), ".md") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// folderSpecID is the stories.yaml id a story spec of a spec folder
// (<folder>/stories/<id>-<slug>.md) belongs to; "" for any other path.
func folderSpecID(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != folderStoriesDir {
		return ""
	}
	entries, err := readFolderEntries(filepath.Dir(dir))
	if err != nil {
		return ""
	}
	base := filepath.Base(path)
	for _, e := range entries {
		if e.ID != "" && strings.HasPrefix(base, e.ID+"-") {
			return e.ID // ids are prefix-free: at most one fits
		}
	}
	return ""
}

// folderWork is step 1 of the worker on a folder+id dispatch: read that
// entry of stories.yaml, then create or resume stories/<id>-<slug>.md by its
// status, or halt with a skeleton spec naming the blocking condition.
func (w *buildAuto) folderWork() (string, error) {
	entries, err := readFolderEntries(w.folder)
	if err != nil {
		return w.sentinel(sentinelUnresolved, "", condNoStoriesYAML)
	}
	var entry *folderEntry
	for i := range entries {
		if entries[i].ID == w.id {
			entry = &entries[i]
			break
		}
	}
	if entry == nil {
		return w.sentinel(sentinelUnresolved, "", condUnknownStoryID)
	}
	found, err := storyFiles(w.folder, w.id)
	if err != nil {
		return "", err
	}
	switch len(found) {
	case 0:
	case 1:
		path := found[0]
		spec, err := workflows.ReadSpec(path)
		switch {
		case err != nil || !knownSpecStatus(spec.Status):
			return w.finish(path, workflows.SpecBlocked, condUnknownStatus)
		case spec.Status == workflows.SpecBlocked:
			return w.finish(path, workflows.SpecBlocked, condAlreadyBlocked)
		}
		return w.from(path, spec.Status)
	default:
		return w.sentinel(sentinelAmbiguous, "", condAmbiguousStory)
	}
	slug := workflows.Slugify(entry.Title)
	if slug == "" {
		slug = "story"
	}
	if !fileExists(filepath.Join(w.folder, folderSpecFile)) {
		return w.sentinel(slug, entry.Title, condNoEpicSpec)
	}
	path := filepath.Join(w.folder, folderStoriesDir, w.id+"-"+slug+".md")
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntitle: %s\ntype: 'feature'\nstatus: 'draft'\nreview_loop_iteration: 0\nfollowup_review_recommended: false\nwarnings: []\ndeferred: []\n---\n\n",
		yamlQuote(entry.Title))
	fmt.Fprintf(&b, "# %s\n\n## Intent\n\n**Problem:** %s\n\n**Approach:** story %s of %s, as its stories.yaml entry describes it.\n",
		entry.Title, strings.TrimSpace(entry.Description), w.id, w.rel(w.folder))
	if w.context != "" {
		fmt.Fprintf(&b, "\n%s\n\n%s\n", callerContextHeader, w.context)
	}
	if err := writeProjectFile(path, b.String()); err != nil {
		return "", err
	}
	return w.from(path, workflows.SpecDraft)
}

// sentinel halts blocked before planning: the write-back lands at
// stories/<id>-<slug>.md, a skeleton spec when the file is not there.
func (w *buildAuto) sentinel(slug, title, condition string) (string, error) {
	path := filepath.Join(w.folder, folderStoriesDir, w.id+"-"+slug+".md")
	if !fileExists(path) {
		if title == "" {
			title = "Story " + w.id
		}
		if err := writeProjectFile(path, "---\nstatus: blocked\n---\n\n# "+title+"\n"); err != nil {
			return "", err
		}
	}
	return w.finish(path, workflows.SpecBlocked, condition)
}

// rel is path relative to the project when it is inside it.
func (w *buildAuto) rel(path string) string {
	if r, err := filepath.Rel(w.root, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

func knownSpecStatus(s string) bool {
	switch s {
	case workflows.SpecDraft, workflows.SpecReadyForDev, workflows.SpecInProgress, workflows.SpecInReview,
		workflows.SpecDone, workflows.SpecBlocked:
		return true
	}
	return false
}

// yamlQuote is s as a single-quoted YAML scalar.
func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
