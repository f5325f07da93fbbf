package workflows

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// AddToFileList makes the story file's "File List" section name every path
// of paths (project-relative, slash-separated): a missing one is added after
// the section's last item, in the style of its items (backquoted or not);
// what the section holds already — items, notes, their order — stays as it
// is, and nothing is removed. A story file without the section gets one at
// its end. It returns the paths it added.
func AddToFileList(storyFile string, paths []string) ([]string, error) {
	fi, err := os.Stat(storyFile)
	if err != nil {
		return nil, fmt.Errorf("story file: %w", err)
	}
	data, err := os.ReadFile(storyFile)
	if err != nil {
		return nil, fmt.Errorf("read story file: %w", err)
	}
	out, added := addToFileList(string(data), paths)
	if len(added) == 0 {
		return nil, nil
	}
	if err := atomicfile.Write(storyFile, []byte(out), fi.Mode().Perm()); err != nil {
		return nil, fmt.Errorf("write story file: %w", err)
	}
	return added, nil
}

// addToFileList is AddToFileList on the file's text.
func addToFileList(text string, paths []string) (string, []string) {
	lines := strings.Split(text, "\n")
	head, end := fileListSection(lines)
	listed := map[string]bool{}
	lastItem, backquoted := -1, false
	if head >= 0 {
		for i := head + 1; i < end; i++ {
			item, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "- ")
			if !ok {
				continue
			}
			if lastItem < 0 {
				backquoted = strings.HasPrefix(item, "`")
			}
			lastItem = i
			if f := strings.Fields(strings.Trim(item, "`")); len(f) > 0 {
				listed[path.Clean(strings.Trim(f[0], "`"))] = true
			}
		}
	}
	var added, items []string
	for _, p := range paths {
		if p = path.Clean(p); listed[p] {
			continue
		}
		listed[p] = true
		added = append(added, p)
		if backquoted {
			items = append(items, "- `"+p+"`")
		} else {
			items = append(items, "- "+p)
		}
	}
	if len(added) == 0 {
		return text, nil
	}
	switch {
	case head < 0:
		// No section: one at the end, after a blank line.
		trimmed := strings.TrimRight(text, "\n")
		return trimmed + "\n\n### File List\n\n" + strings.Join(items, "\n") + "\n", added
	case lastItem >= 0:
		at := lastItem + 1
		lines = append(lines[:at], append(items, lines[at:]...)...)
	default:
		// A section with no items yet (perhaps a placeholder note): the items
		// go right under its heading, with a blank line between.
		at := head + 1
		ins := append([]string{""}, items...)
		if at < len(lines) && strings.TrimSpace(lines[at]) == "" {
			at++
			ins = items
			if at < len(lines) && strings.TrimSpace(lines[at]) != "" {
				ins = append(append([]string{}, items...), "")
			}
		}
		lines = append(lines[:at], append(ins, lines[at:]...)...)
	}
	return strings.Join(lines, "\n"), added
}

// fileListSection finds the "File List" heading and the line where its
// section ends (the next heading of its level or above, or the end); -1
// when there is none.
func fileListSection(lines []string) (head, end int) {
	head, level := -1, 0
	for i, line := range lines {
		t := strings.TrimSpace(line)
		h := len(t) - len(strings.TrimLeft(t, "#"))
		if h == 0 || !strings.HasPrefix(t[h:], " ") {
			continue
		}
		if head >= 0 && h <= level {
			return head, i
		}
		if head < 0 && strings.EqualFold(strings.TrimSpace(t[h:]), "file list") {
			head, level = i, h
		}
	}
	return head, len(lines)
}
