package workflows

import (
	"errors"
	"fmt"
	"github.com/story-automator/story-automator/internal/lazyre"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Epic is an epic as the planning files declare it.
type Epic struct {
	ID    string
	Title string
	// File is the file that first declared the epic.
	File    string
	Stories []EpicStory
}

// EpicStory is a story as its epic declares it.
type EpicStory struct {
	Key   StoryKey
	Title string
	// DependsOn lists the stories this one needs done first, in the order
	// declared; they may lie in other epics.
	DependsOn []StoryKey
	// Text is the story's section of the epic file, heading included.
	Text string
}

var (
	epicHeading  = lazyre.New(`(?i)^#{1,3}\s+epic\s+([a-z0-9_][a-z0-9_-]*)\s*(?:[:.\-–—]\s*(.*?))?\s*$`)
	storyHeading = lazyre.New(`(?i)^(#{2,5})\s+story\s+([a-z0-9_][a-z0-9_-]*\.\d+)\s*(?:[:\-–—]\s*(.*?))?\s*$`)
	// dependencyLine accepts the spellings documented in the README:
	// "Depends on:", "Dependencies:", "Dependency:", "Prerequisites:",
	// "Prerequisite:", "Blocked by:", bold or not, bulleted or not.
	dependencyLine = lazyre.New(`(?i)^\s*(?:[-*]\s+)?\**\s*(?:depends\s+on|dependencies|dependency|prerequisites?|blocked\s+by)\s*\**\s*:\s*\**(.*)$`)
	headingLevel   = lazyre.New(`^(#{1,6})\s`)
)

// EpicFiles lists the files epics are read from, in reading order: in the
// artifacts directory and then each planning directory, epics.md, then
// epic-*.md, then epics/*.md (names holding "retro" are skipped).
func (p *Layout) EpicFiles() ([]string, error) {
	var files []string
	for _, dir := range append([]string{p.ArtifactsDir}, p.PlanningDirs...) {
		for _, pattern := range []string{"epics.md", "epic-*.md", filepath.Join("epics", "*.md")} {
			matches, err := filepath.Glob(filepath.Join(dir, pattern))
			if err != nil {
				return nil, fmt.Errorf("find epics: %w", err)
			}
			sort.Strings(matches)
			for _, m := range matches {
				if !strings.Contains(strings.ToLower(filepath.Base(m)), "retro") && !slices.Contains(files, m) {
					files = append(files, m)
				}
			}
		}
	}
	return files, nil
}

// Epics reads every epic file and merges them: an epic declared in several
// files keeps its first title, and a story its first declaration. Epics and
// their stories come out in key order.
func (p *Layout) Epics() ([]Epic, error) {
	epics, _, err := p.epics()
	return slices.Clone(epics), err
}

// epics reads the epic files and returns their epics (shared with the
// cache: not to be changed) and the generation of their parse.
func (p *Layout) epics() ([]Epic, int, error) {
	paths, err := p.EpicFiles()
	if err != nil {
		return nil, 0, err
	}
	var files []cachedFile
	for _, f := range paths {
		data, err := os.ReadFile(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read epics: %w", err)
		}
		files = append(files, cachedFile{path: f, data: data})
	}
	if epics, gen, ok := p.cachedEpics(files); ok {
		return epics, gen, nil
	}
	return parseEpicFiles(files), 0, nil
}

// parseEpicFiles parses and merges epic files.
func parseEpicFiles(files []cachedFile) []Epic {
	var all []Epic
	for _, f := range files {
		all = mergeEpics(all, ParseEpics(f.path, string(f.data)))
	}
	sort.SliceStable(all, func(i, j int) bool { return compareEpics(all[i].ID, all[j].ID) < 0 })
	for i := range all {
		ss := all[i].Stories
		sort.SliceStable(ss, func(a, b int) bool { return ss[a].Key.Num < ss[b].Key.Num })
	}
	return all
}

func mergeEpics(into, more []Epic) []Epic {
	for _, e := range more {
		i := slices.IndexFunc(into, func(x Epic) bool { return x.ID == e.ID })
		if i < 0 {
			into = append(into, e)
			continue
		}
		if into[i].Title == "" {
			into[i].Title = e.Title
		}
		for _, s := range e.Stories {
			if !slices.ContainsFunc(into[i].Stories, func(x EpicStory) bool { return x.Key == s.Key }) {
				into[i].Stories = append(into[i].Stories, s)
			}
		}
	}
	return into
}

// ParseEpics reads the epics and stories of one markdown file: headings
// "## Epic N: Title" and "### Story N.M: Title", and inside a story's section
// dependency lines such as "Depends on: 1.1, 1.2" or "**Dependencies:** Story 1.1".
// Headings inside fenced code are ignored.
func ParseEpics(path, text string) []Epic {
	var epics []Epic
	var cur *EpicStory
	storyLevel := 0
	var section []string
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimRight(strings.Join(section, "\n"), "\n") + "\n"
			epics = addStory(epics, path, *cur)
		}
		cur, section = nil, nil
	}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if !fenced {
			if m := epicHeading().FindStringSubmatch(line); m != nil {
				flush()
				// "## Epic List" is a section, not an epic: a named epic needs a title.
				if id, err := ParseEpicID(m[1]); err == nil && (m[2] != "" || allDigits(id)) {
					epics = ensureEpic(epics, path, id, m[2])
				}
				continue
			}
			if m := storyHeading().FindStringSubmatch(line); m != nil {
				flush()
				if k, err := ParseStoryKey(m[2]); err == nil {
					cur, storyLevel = &EpicStory{Key: k, Title: m[3]}, len(m[1])
				}
			} else if h := headingLevel().FindStringSubmatch(line); h != nil && cur != nil && len(h[1]) <= storyLevel {
				flush()
			}
			if m := dependencyLine().FindStringSubmatch(line); m != nil && cur != nil {
				cur.DependsOn = appendRefs(cur.DependsOn, cur.Key, m[1])
			}
		}
		if cur != nil {
			section = append(section, line)
		}
	}
	flush()
	return epics
}

func ensureEpic(epics []Epic, path, id, title string) []Epic {
	for i := range epics {
		if epics[i].ID == id {
			if epics[i].Title == "" {
				epics[i].Title = title
			}
			return epics
		}
	}
	return append(epics, Epic{ID: id, Title: title, File: path})
}

func addStory(epics []Epic, path string, s EpicStory) []Epic {
	epics = ensureEpic(epics, path, s.Key.Epic, "")
	for i := range epics {
		if epics[i].ID == s.Key.Epic {
			if !slices.ContainsFunc(epics[i].Stories, func(x EpicStory) bool { return x.Key == s.Key }) {
				epics[i].Stories = append(epics[i].Stories, s)
			}
		}
	}
	return epics
}

// appendRefs adds every story key named in a dependency line ("Story 1.1,
// 1.2 and auth-3"); words that are not keys ("None", "Story") are skipped.
func appendRefs(deps []StoryKey, self StoryKey, text string) []StoryKey {
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '(' || r == ')' || r == '[' || r == ']' || r == '`' || r == '*'
	}) {
		tok = strings.TrimRight(tok, ".:")
		k, err := ParseStoryKey(tok)
		if err == nil && k != self && !slices.Contains(deps, k) {
			deps = append(deps, k)
		}
	}
	return deps
}
