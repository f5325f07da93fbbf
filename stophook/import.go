package stophook

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Loop file formats `loop import` understands.
const (
	FormatRalph = "ralph" // .claude/ralph-loop.local.md (the Ralph Wiggum plugin)
	FormatForge = "forge" // .claude/forge-loop.SESSION.local.md
)

// ErrLoopFile marks a loop state file that cannot be imported.
var ErrLoopFile = errors.New("not a loop state file")

// ImportedLoop is a Ralph or Forge loop state file: YAML-like frontmatter
// (active, iteration, max_iterations, completion_promise, session_id,
// session_transcript, started_at) and the prompt as the body.
type ImportedLoop struct {
	Format            string
	Active            string // "true", "false" or "paused"
	Iteration         int
	MaxIterations     int // 0: the source loop had no limit
	CompletionPromise string
	// OwnerSession is the agent session the file is bound to, if any: Ralph's
	// session_id, or the transcript file name Forge's session_transcript names.
	OwnerSession string
	StartedAt    string
	Prompt       string
	// Other holds frontmatter keys this importer does not map.
	Other map[string]string
}

// LoopFileFormat names the format a loop state file's name says it has.
func LoopFileFormat(path string) string {
	base := filepath.Base(path)
	switch {
	case strings.HasPrefix(base, "ralph-loop.") && strings.HasSuffix(base, ".local.md"):
		return FormatRalph
	case strings.HasPrefix(base, "forge-loop.") && strings.HasSuffix(base, ".local.md"):
		return FormatForge
	}
	return ""
}

// ParseLoopFile reads a loop state file. The frontmatter is parsed line by line
// rather than as YAML: these files are written by shell scripts that do not
// escape quotes inside values.
func ParseLoopFile(path string, data []byte) (ImportedLoop, error) {
	text := strings.ReplaceAll(strings.TrimPrefix(string(data), "\ufeff"), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	start := 0
	for start < len(lines) && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	if start == len(lines) || strings.TrimSpace(lines[start]) != "---" {
		return ImportedLoop{}, fmt.Errorf("%w: %s does not start with a --- frontmatter block", ErrLoopFile, path)
	}
	end := start + 1
	for end < len(lines) && strings.TrimSpace(lines[end]) != "---" {
		end++
	}
	if end == len(lines) {
		return ImportedLoop{}, fmt.Errorf("%w: %s: the frontmatter block is not closed", ErrLoopFile, path)
	}
	l := ImportedLoop{Format: LoopFileFormat(path), Active: "true", Other: map[string]string{}}
	for _, line := range lines[start+1 : end] {
		if err := l.setField(line); err != nil {
			return ImportedLoop{}, fmt.Errorf("%w: %s: %v", ErrLoopFile, path, err)
		}
	}
	l.Prompt = strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	if l.Prompt == "" {
		return ImportedLoop{}, fmt.Errorf("%w: %s has no prompt after the frontmatter", ErrLoopFile, path)
	}
	return l, nil
}

func (l *ImportedLoop) setField(line string) error {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "#") {
		return nil
	}
	key, raw, ok := strings.Cut(t, ":")
	if !ok {
		return fmt.Errorf("frontmatter line %q is not key: value", t)
	}
	key = strings.TrimSpace(key)
	val := frontmatterValue(raw)
	var err error
	switch key {
	case "active":
		switch strings.ToLower(val) {
		case "true", "yes", "":
			l.Active = "true"
		case "false", "no":
			l.Active = "false"
		case "paused":
			l.Active = "paused"
		default:
			return fmt.Errorf("active: %q is not true, false or paused", val)
		}
	case "iteration":
		l.Iteration, err = frontmatterInt(key, val)
	case "max_iterations":
		l.MaxIterations, err = frontmatterInt(key, val)
	case "completion_promise":
		l.CompletionPromise = val
	case "session_id":
		if l.Format != FormatForge { // Forge's session_id is its own label, not the agent's
			l.OwnerSession = val
		}
	case "session_transcript":
		if l.Format == FormatForge && val != "" {
			l.OwnerSession = strings.TrimSuffix(filepath.Base(val), ".jsonl")
		}
	case "started_at":
		l.StartedAt = val
	default:
		l.Other[key] = val
	}
	return err
}

// frontmatterValue unquotes a value; null, ~ and nothing are empty.
func frontmatterValue(raw string) string {
	v := strings.TrimSpace(raw)
	switch {
	case v == "null" || v == "~":
		return ""
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

func frontmatterInt(key, val string) (int, error) {
	if val == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(val)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %q is not a whole number", key, val)
	}
	return n, nil
}
