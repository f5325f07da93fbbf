package workflows

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/story-automator/story-automator/internal/lazyre"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// statusLine matches a story file's status line: "Status: review",
// "**Status:** Done", "- Status: done" (case-insensitive).
var statusLine = lazyre.New(`(?i)^(\s*(?:[-*]\s+)?\**status\**\s*:\**[ \t]*)(.*?)([ \t\r]*)$`)

// statusHeading matches the older "## Status" heading whose value is the next
// non-empty line.
var statusHeading = lazyre.New(`(?i)^#{1,4}\s*status\s*$`)

// StoryFiles returns every story file of k, sorted: the *.md files in the
// artifacts directory (or its stories/ subdirectory) whose name is a story key
// equal to k, such as 1-2-user-login.md.
func (p *Layout) StoryFiles(k StoryKey) ([]string, error) {
	index, err := p.storyFileIndex()
	if err != nil {
		return nil, err
	}
	return index[k], nil
}

// storyFileIndex lists every story file once, by story key, each list sorted.
func (p *Layout) storyFileIndex() (map[StoryKey][]string, error) {
	index := map[StoryKey][]string{}
	for _, dir := range []string{p.ArtifactsDir, filepath.Join(p.ArtifactsDir, "stories")} {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list story files in %s: %w", dir, err)
		}
		for _, ent := range ents {
			name := ent.Name()
			if ent.IsDir() || !strings.HasSuffix(name, ".md") {
				continue
			}
			if key, err := ParseStoryKey(name); err == nil {
				index[key] = append(index[key], filepath.Join(dir, name))
			}
		}
	}
	for _, files := range index {
		sort.Strings(files)
	}
	return index, nil
}

// StoryFile returns the one story file of k: ErrStoryFileNotFound when there is
// none, an error naming them when there are several.
func (p *Layout) StoryFile(k StoryKey) (string, error) {
	files, err := p.StoryFiles(k)
	if err != nil {
		return "", err
	}
	switch len(files) {
	case 0:
		return "", fmt.Errorf("%w for story %s in %s", ErrStoryFileNotFound, k.Dotted(), p.Rel(p.ArtifactsDir))
	case 1:
		return files[0], nil
	}
	return "", fmt.Errorf("story %s has %d story files: %s", k.Dotted(), len(files), strings.Join(p.rels(files), ", "))
}

func (p *Layout) rels(paths []string) []string {
	out := make([]string, len(paths))
	for i, f := range paths {
		out[i] = p.Rel(f)
	}
	return out
}

// ReadStoryFileStatus returns the normalised status a story file declares
// ("Ready for Dev" → "ready-for-dev"); ok is false when it has no status line.
func ReadStoryFileStatus(path string) (status string, ok bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, fmt.Errorf("read story file: %w", err)
	}
	lines := strings.Split(string(data), "\n")
	i, raw := findStatus(lines)
	if i < 0 {
		return "", false, nil
	}
	return NormalizeStatus(raw), true, nil
}

// NormalizeStatus turns a status as people write it into BMAD's word form:
// lower case, spaces and underscores as hyphens, markdown emphasis removed.
func NormalizeStatus(s string) string {
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), "*_`"))
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '_' || r == '\t' }), "-")
	return s
}

// findStatus returns the line index holding the status value and the raw
// value, skipping fenced code; -1 when there is none.
func findStatus(lines []string) (int, string) {
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := statusLine().FindStringSubmatch(l); m != nil && strings.TrimSpace(m[2]) != "" {
			return i, m[2]
		}
		if statusHeading().MatchString(l) {
			for j := i + 1; j < len(lines); j++ {
				if v := strings.TrimSpace(lines[j]); v != "" {
					if strings.HasPrefix(v, "#") {
						break
					}
					return j, v
				}
			}
		}
	}
	return -1, ""
}

// SetStoryFileStatus rewrites a story file's status line to status, keeping
// its prefix ("**Status:** "); a file with none gets "Status: <status>" under
// its title. The file is replaced atomically with its mode kept.
func SetStoryFileStatus(path, status string) error {
	if err := validStatus(status); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("story file: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read story file: %w", err)
	}
	lines := strings.Split(string(data), "\n")
	if i, _ := findStatus(lines); i >= 0 {
		if m := statusLine().FindStringSubmatch(lines[i]); m != nil {
			lines[i] = m[1] + status + m[3]
		} else {
			lead := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
			lines[i] = lead + status
		}
	} else {
		at := 0
		if len(lines) > 0 && strings.HasPrefix(lines[0], "# ") {
			at = 1
		}
		ins := []string{"Status: " + status, ""}
		if at == 1 {
			ins = []string{"", "Status: " + status}
		}
		lines = append(lines[:at], append(ins, lines[at:]...)...)
	}
	out := []byte(strings.Join(lines, "\n"))
	if bytes.Equal(out, data) {
		return nil
	}
	return atomicfile.Write(path, out, fi.Mode().Perm())
}
