package workflows

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/filelock"
)

// DeferredFinding is one item of a spec's frontmatter `deferred:` list, as
// bmad-build-auto's review writes it.
type DeferredFinding struct {
	Summary  string `yaml:"summary"`
	Evidence string `yaml:"evidence"`
	// Location (file:line or a component) and Severity (high, medium, low,
	// "… (unverified)" for a maybe-false finding) are optional.
	Location string `yaml:"location"`
	Severity string `yaml:"severity"`
}

// ReadSpecDeferred reads a spec and its `deferred:` findings. A list that
// is not one (an item not a mapping, an item without a summary) is
// ErrSpecInvalid naming the spec; ReadSpec alone never reads the list, so a
// run's reading of a spec's status does not depend on it.
func ReadSpecDeferred(path string) (Spec, []DeferredFinding, error) {
	s, err := ReadSpec(path)
	if err != nil {
		return s, nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return s, nil, err
	}
	front, _, _ := cutFrontmatter(strings.ReplaceAll(string(data), "\r\n", "\n"))
	var doc struct {
		Deferred []DeferredFinding `yaml:"deferred"`
	}
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		return s, nil, fmt.Errorf("%w: %s: frontmatter deferred: %v", ErrSpecInvalid, path, err)
	}
	for i, f := range doc.Deferred {
		if strings.TrimSpace(f.Summary) == "" {
			return s, nil, fmt.Errorf("%w: %s: frontmatter deferred: item %d has no summary", ErrSpecInvalid, path, i+1)
		}
	}
	return s, doc.Deferred, nil
}

// DeferredWorkPath is the project's deferred-work.md: in the folder the
// build skills write to (the merged _bmad/config.toml layers'
// implementation_artifacts on BMAD 6.12), else in the layout's artifacts.
func DeferredWorkPath(l *Layout) (string, error) {
	gen, err := Detect(l.Root)
	if err != nil {
		return "", err
	}
	if s, ok := gen.(*Skills); ok && s.ImplementationArtifacts != "" {
		return filepath.Join(s.ImplementationArtifacts, DeferredWorkFile), nil
	}
	return filepath.Join(l.ArtifactsDir, DeferredWorkFile), nil
}

// Collected is what a collection appended to deferred-work.md.
type Collected struct {
	// Path is deferred-work.md.
	Path string `json:"path"`
	// Specs is how many done specs were read.
	Specs int `json:"specs"`
	// Added are the items appended, in order.
	Added []DeferredEntry `json:"added"`
	// Warnings name the done specs whose findings could not be read.
	Warnings []string `json:"warnings,omitempty"`
}

// CollectDeferred appends the `deferred:` findings of one spec, when it is
// done, to deferred-work.md: what a run calls when a story lands. specPath
// is the spec in l's tree: its path relative to l.Root is the item's
// source_spec (call it on the tree the story landed in, not on a worktree
// about to go). A finding already there from the same spec (same summary
// and location) is not added again; nothing there is changed or reordered.
// A spec that is not done adds nothing; one that cannot be read is an error.
func CollectDeferred(l *Layout, specPath string) (Collected, error) {
	path, err := DeferredWorkPath(l)
	if err != nil {
		return Collected{}, err
	}
	return collectDeferred(l.Root, path, []string{specPath}, true)
}

// CollectAllDeferred is CollectDeferred for every done spec of the project:
// the sprint's specs (spec-*.md among the implementation artifacts) and
// each spec folder's stories (stories/*.md beside a stories.yaml). It is
// idempotent: a second call adds nothing. A spec that cannot be read is a
// warning, not a stop.
func CollectAllDeferred(l *Layout) (Collected, error) {
	path, err := DeferredWorkPath(l)
	if err != nil {
		return Collected{}, err
	}
	specs, err := projectSpecs(l, filepath.Dir(path))
	if err != nil {
		return Collected{Path: path}, err
	}
	return collectDeferred(l.Root, path, specs, false)
}

// projectSpecs lists the sprint specs in dir and the stories of every spec
// folder under the project's output folders.
func projectSpecs(l *Layout, dir string) ([]string, error) {
	specs, err := SprintSpecs(dir)
	if err != nil {
		return nil, err
	}
	dirs := []string{dir, l.ArtifactsDir}
	if out := filepath.Dir(dir); out != l.Root {
		dirs = append(dirs, out) // the output folder, where bmad-spec writes
	}
	dirs = append(dirs, l.PlanningDirs...)
	folders, err := SpecFolders(dirs)
	if err != nil {
		return nil, err
	}
	for _, f := range folders {
		stories, err := filepath.Glob(filepath.Join(f, "stories", "*.md"))
		if err != nil {
			return nil, err
		}
		slices.Sort(stories)
		specs = append(specs, stories...)
	}
	return specs, nil
}

// deferredLockWait bounds the wait for another writer of deferred-work.md.
const deferredLockWait = 30 * time.Second

// collectDeferred appends the new findings of specs to path under the
// project's lock. strict makes a spec that cannot be read an error, else
// a warning.
func collectDeferred(root, path string, specs []string, strict bool) (Collected, error) {
	release, err := lockDeferred(root)
	if err != nil {
		return Collected{Path: path}, err
	}
	defer release()
	for attempt := 1; ; attempt++ {
		out, err := collectOnce(root, path, specs, strict)
		if !errors.Is(err, errChangedMeanwhile) || attempt == deferredRetries {
			return out, err
		}
	}
}

// deferredRetries bounds how often a collection starts over because a
// writer outside the lock (a BMAD skill) changed the file meanwhile.
const deferredRetries = 5

var errChangedMeanwhile = errors.New(DeferredWorkFile + " keeps changing under us")

func collectOnce(root, path string, specs []string, strict bool) (Collected, error) {
	out := Collected{Path: path, Added: []DeferredEntry{}}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return out, fmt.Errorf("read %s: %w", path, err)
	}
	have, err := parseDeferredWork(path, root, string(data))
	if err != nil {
		return out, err
	}
	seen := deferredSeen{}
	for _, e := range have {
		seen.add(root, e)
	}
	for _, spec := range specs {
		s, findings, err := ReadSpecDeferred(spec)
		if err != nil && strict {
			return out, err
		}
		if err != nil {
			out.Warnings = append(out.Warnings, err.Error())
			continue
		}
		if s.Status != SpecDone {
			continue
		}
		out.Specs++
		source := sourceKey(root, spec)
		for _, f := range findings {
			e := DeferredEntry{SourceSpec: source, Summary: strings.TrimSpace(f.Summary), Evidence: strings.TrimSpace(f.Evidence),
				Location: strings.TrimSpace(f.Location), Severity: strings.TrimSpace(f.Severity)}
			e.ID = deferredID(root, e.SourceSpec, e.Summary, e.Location)
			if seen.has(root, e) {
				continue
			}
			seen.add(root, e)
			out.Added = append(out.Added, e)
		}
	}
	if len(out.Added) == 0 {
		return out, nil
	}
	if err := appendEntries(path, data, out.Added); err != nil {
		out.Added = []DeferredEntry{}
		return out, err
	}
	return out, nil
}

// deferredSeen is the items there, by source spec and summary, with their
// locations: an item is there already when one of the same source and
// summary has its location or either has none (the build skills' own
// entries carry none).
type deferredSeen map[string][]string

func seenKey(root string, e DeferredEntry) string {
	return sourceKey(root, e.SourceSpec) + "\x00" + strings.Join(strings.Fields(e.Summary), " ")
}

func (s deferredSeen) add(root string, e DeferredEntry) {
	k := seenKey(root, e)
	s[k] = append(s[k], strings.Join(strings.Fields(e.Location), " "))
}

func (s deferredSeen) has(root string, e DeferredEntry) bool {
	locs, ok := s[seenKey(root, e)]
	loc := strings.Join(strings.Fields(e.Location), " ")
	return ok && (loc == "" || slices.Contains(locs, loc) || slices.Contains(locs, ""))
}

// appendEntries writes path as before plus the entries, atomically; the
// bytes before are kept as they were.
func appendEntries(path string, before []byte, entries []DeferredEntry) error {
	var b strings.Builder
	b.Write(before)
	if len(before) > 0 && !strings.HasSuffix(string(before), "\n") {
		b.WriteString("\n")
	}
	line := strings.Count(b.String(), "\n") + 1
	for i := range entries {
		entries[i].Line = line
		text := formatEntry(entries[i])
		b.WriteString(text)
		line += strings.Count(text, "\n")
	}
	if err := atomicfile.EnsureDir(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if now, err := os.ReadFile(path); string(now) != string(before) && (err == nil || len(before) > 0) {
		return fmt.Errorf("%w: %s", errChangedMeanwhile, path)
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	return atomicfile.Write(path, []byte(b.String()), perm)
}

// lockDeferred takes the project's lock on deferred-work.md (a run landing
// a story and the deferred command may collect at once).
func lockDeferred(root string) (func(), error) {
	dir := filepath.Join(root, StateDir)
	if err := atomicfile.EnsureDir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("deferred-work lock: %w", err)
	}
	release, err := filelock.Acquire(context.Background(), filepath.Join(dir, "deferred-work.lock"), deferredLockWait)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", DeferredWorkFile, err)
	}
	return release, nil
}

// DeferredWork is the project's deferred-work.md, read.
type DeferredWork struct {
	// Path is the file ("" items when it does not exist yet).
	Path string `json:"path"`
	// Items are all its items, open and done, in file order.
	Items []DeferredEntry `json:"items"`
}

// ReadDeferredWork reads the project's deferred-work.md; a missing file
// has no items. One that cannot be read is ErrDeferredWorkInvalid naming
// its line.
func ReadDeferredWork(l *Layout) (DeferredWork, error) {
	path, err := DeferredWorkPath(l)
	if err != nil {
		return DeferredWork{}, err
	}
	w := DeferredWork{Path: path, Items: []DeferredEntry{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return w, nil
	}
	if err != nil {
		return w, fmt.Errorf("read %s: %w", path, err)
	}
	items, err := parseDeferredWork(path, l.Root, string(data))
	if err != nil {
		return w, err
	}
	if items != nil {
		w.Items = items
	}
	return w, nil
}

// Open is the open items whose severity ranks at least min (0: all), in
// file order.
func (w DeferredWork) Open(min int) []DeferredEntry {
	out := []DeferredEntry{}
	for _, e := range w.Items {
		if e.Open() && SeverityRank(e.Severity) >= min {
			out = append(out, e)
		}
	}
	return out
}

// MarkDeferredDone marks the open items named by ids done with mark (the
// commit that did the work): the one change ever made to an item already in
// deferred-work.md is this mark — a line `done: <mark>` after the item's
// last line, or, for a free-form bullet, its box checked (`- [x] …`).
// Nothing else moves. An id that is not in the file, or is done already (a
// person closed it meanwhile), is skipped: marked lists the ids marked.
func MarkDeferredDone(l *Layout, ids []string, mark string) ([]string, error) {
	mark = strings.TrimSpace(mark)
	if mark == "" || strings.ContainsAny(mark, "\r\n") {
		return nil, fmt.Errorf("a done mark is one line of text, got %q", mark)
	}
	path, err := DeferredWorkPath(l)
	if err != nil {
		return nil, err
	}
	release, err := lockDeferred(l.Root)
	if err != nil {
		return nil, err
	}
	defer release()
	for attempt := 1; ; attempt++ {
		marked, err := markOnce(l.Root, path, ids, mark)
		if !errors.Is(err, errChangedMeanwhile) || attempt == deferredRetries {
			return marked, err
		}
	}
}

func markOnce(root, path string, ids []string, mark string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	items, err := parseDeferredWork(path, root, string(data))
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	var marked []string
	// From the last item up, so an inserted line moves no item still to mark.
	for i := len(items) - 1; i >= 0; i-- {
		e := items[i]
		if !e.Open() || !slices.Contains(ids, e.ID) {
			continue
		}
		marked = append(marked, e.ID)
		if e.free {
			lines[e.Line-1] = checkBox(lines[e.Line-1])
			continue
		}
		last := lines[e.end-1]
		if !strings.HasSuffix(last, "\n") {
			lines[e.end-1] = last + "\n"
		}
		lines = slices.Insert(lines, e.end, "  "+keyDone+": "+mark+"\n")
	}
	slices.Reverse(marked)
	if len(marked) == 0 {
		return []string{}, nil
	}
	if now, err := os.ReadFile(path); err != nil || string(now) != string(data) {
		return nil, fmt.Errorf("%w: %s", errChangedMeanwhile, path)
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := atomicfile.Write(path, []byte(strings.Join(lines, "")), perm); err != nil {
		return nil, err
	}
	return marked, nil
}

// checkBox is a free-form bullet line with its box checked.
func checkBox(line string) string {
	marker, rest := line[:2], line[2:]
	if strings.HasPrefix(rest, "[ ] ") {
		return marker + "[x] " + rest[4:]
	}
	return marker + "[x] " + rest
}
