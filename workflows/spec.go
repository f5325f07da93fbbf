package workflows

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// The statuses of a BMAD 6.12 spec (its frontmatter `status`), in order.
const (
	SpecDraft       = "draft"
	SpecReadyForDev = "ready-for-dev"
	SpecInProgress  = "in-progress"
	SpecInReview    = "in-review"
	SpecDone        = "done"
	SpecBlocked     = "blocked"
)

// AutoRunResultHeading starts the section bmad-build-auto appends to a spec
// each time it stops; the last one is its latest word.
const AutoRunResultHeading = "## Auto Run Result"

// Spec is what a spec file bmad-build-auto writes says about its work.
type Spec struct {
	Path string
	// Status is the frontmatter `status`: authoritative.
	Status string `yaml:"status"`
	// BaselineRevision is the commit the implementation started from
	// ("" before implementation; "NO_VCS" without version control).
	BaselineRevision          string   `yaml:"baseline_revision"`
	ReviewLoopIteration       int      `yaml:"review_loop_iteration"`
	FollowupReviewRecommended bool     `yaml:"followup_review_recommended"`
	Warnings                  []string `yaml:"warnings"`
	// Result is the last Auto Run Result section (nil when there is none).
	Result *AutoRunResult `yaml:"-"`
}

// AutoRunResult is one Auto Run Result section.
type AutoRunResult struct {
	// Status and BlockingCondition are its "Status:" and "Blocking
	// condition:" lines ("" when absent); Text is the whole section.
	Status, BlockingCondition, Text string
}

// ReadSpec reads a spec's frontmatter and its last Auto Run Result.
func ReadSpec(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Spec{}, err
	}
	s := Spec{Path: path}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	front, body, ok := cutFrontmatter(text)
	if !ok {
		return s, fmt.Errorf("%w: %s: no frontmatter (--- … ---) at the top", ErrSpecInvalid, path)
	}
	if err := yaml.Unmarshal([]byte(front), &s); err != nil {
		return s, fmt.Errorf("%w: %s: frontmatter: %v", ErrSpecInvalid, path, err)
	}
	s.Path, s.Status = path, strings.TrimSpace(s.Status)
	if s.Status == "" {
		return s, fmt.Errorf("%w: %s: frontmatter has no status", ErrSpecInvalid, path)
	}
	s.Result = lastAutoRunResult(body)
	return s, nil
}

func cutFrontmatter(text string) (front, body string, ok bool) {
	rest, found := strings.CutPrefix(text, "---\n")
	if !found {
		return "", text, false
	}
	if strings.HasPrefix(rest, "---\n") {
		return "", rest[4:], true
	}
	end := strings.Index(rest, "\n---\n")
	if end < 0 {
		if strings.HasSuffix(rest, "\n---") {
			return rest[:len(rest)-4], "", true
		}
		return "", text, false
	}
	return rest[:end+1], rest[end+5:], true
}

// lastAutoRunResult finds the last "## Auto Run Result" section (to the
// next heading of its level or above) outside fenced code.
func lastAutoRunResult(body string) *AutoRunResult {
	lines := strings.Split(body, "\n")
	start, fenced := -1, false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && strings.TrimRight(l, " \t") == AutoRunResultHeading {
			start = i
		}
	}
	if start < 0 {
		return nil
	}
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if t := lines[i]; strings.HasPrefix(t, "# ") || strings.HasPrefix(t, "## ") {
			end = i
			break
		}
	}
	r := &AutoRunResult{Text: strings.TrimSpace(strings.Join(lines[start+1:end], "\n"))}
	for _, l := range lines[start+1 : end] {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "-*"))
		t = strings.ReplaceAll(t, "**", "")
		if v, ok := cutLabel(t, "Status:"); ok && r.Status == "" {
			r.Status = v
		}
		if v, ok := cutLabel(t, "Blocking condition:"); ok && r.BlockingCondition == "" {
			r.BlockingCondition = v
		}
	}
	return r
}

func cutLabel(line, label string) (string, bool) {
	if len(line) < len(label) || !strings.EqualFold(line[:len(label)], label) {
		return "", false
	}
	return strings.Trim(strings.TrimSpace(line[len(label):]), "`"), true
}

// DiedMidFlight reports a status a session may only leave when it stopped
// before its end: a retry resumes the spec by its path.
func (s Spec) DiedMidFlight() bool {
	switch s.Status {
	case SpecDraft, SpecInProgress, SpecInReview:
		return true
	}
	return false
}

// SprintSpecs lists the sprint-mode specs (spec-*.md) in dir, sorted.
func SprintSpecs(dir string) ([]string, error) {
	out, err := filepath.Glob(filepath.Join(dir, "spec-*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// StorySprintSpecs lists the sprint-mode specs in dir whose names lead
// with story k's key (spec-<epic>-<n>-…), sorted: the only specs
// NewSprintSpec weighs for the story, so the only ones a story need record
// as there before its first dispatch (a run's backlog of done specs is not
// copied into every story's state).
func StorySprintSpecs(dir string, k StoryKey) ([]string, error) {
	all, err := SprintSpecs(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range all {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "spec-"), ".md")
		if key, _, err := splitStoryKey(name); err == nil && key == k {
			out = append(out, p)
		}
	}
	return out, nil
}

// NewSprintSpec finds the spec a first dispatch of a story created: among
// the spec-*.md files in dir that were not in before, the one whose name
// leads with the story's key (spec-<epic>-<n>-…). None is ("", nil); more
// than one is an error naming them.
func NewSprintSpec(dir string, before []string, k StoryKey) (string, error) {
	now, err := StorySprintSpecs(dir, k)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var found []string
	for _, p := range now {
		if !slices.Contains(before, p) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: story %s has %d new specs: %s", ErrSpecInvalid, k.Dotted(), len(found), strings.Join(found, ", "))
}

// SetSpecStatus rewrites the frontmatter status of a spec to status and
// leaves every other byte of the file as it was: the value's quotes, the
// comment after it (BMAD's template explains the field there) and the line
// endings. One atomic write: a kill leaves the old spec or the new one.
func SetSpecStatus(path, status string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if strings.TrimRight(lines[0], "\r\n") != "---" {
		return fmt.Errorf("%w: %s: no frontmatter (--- … ---) at the top", ErrSpecInvalid, path)
	}
	for i := 1; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r\n")
		if l == "---" {
			break
		}
		value, ok := strings.CutPrefix(l, "status:")
		if !ok {
			continue
		}
		comment := ""
		if at := strings.Index(value, " #"); at >= 0 {
			value, comment = value[:at], value[at:]
		}
		quote := ""
		if v := strings.TrimSpace(value); len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
			quote = v[:1]
		}
		lines[i] = "status: " + quote + status + quote + comment + lines[i][len(l):]
		return atomicfile.Write(path, []byte(strings.Join(lines, "")), info.Mode().Perm())
	}
	return fmt.Errorf("%w: %s: frontmatter has no status", ErrSpecInvalid, path)
}
