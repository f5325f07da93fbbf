package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
)

// specFromTemplate fills BMAD 6.12's own spec template (as installed) the way
// bmad-build-auto does: the frontmatter status, a baseline, and body text.
func specFromTemplate(t *testing.T, dir, status, baseline, tail string) string {
	t.Helper()
	tmpl, err := os.ReadFile(filepath.Join(dir, ".claude/skills/bmad-build-auto/spec-template.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(tmpl), "status: 'draft'", "status: '"+status+"'", 1)
	if !strings.Contains(text, "status: '"+status+"'") {
		t.Fatalf("the installed template has no status: 'draft' line:\n%s", tmpl)
	}
	if baseline != "" {
		text = strings.Replace(text, "\n---\n", "\nbaseline_revision: "+baseline+"\n---\n", 1)
	}
	path := filepath.Join(dir, "_bmad-output/implementation-artifacts/spec-1-1-sign-up.md")
	writeFile(t, path, text+tail)
	return path
}

// The real template's frontmatter reads (its comments after values too),
// and the last Auto Run Result is the one that counts.
func TestReadSpecOnBMADsTemplate(t *testing.T) {
	dir := realbmad.Project(t)
	tail := "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: implementation verification failed\n" +
		"\n## Auto Run Result\n\n- **Status:** done\n- Summary: sign-up form and its tests\n\n```\n## Auto Run Result\nStatus: draft\n```\n"
	path := specFromTemplate(t, dir, SpecDone, "0123abcd", tail)
	s, err := ReadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != SpecDone || s.BaselineRevision != "0123abcd" || s.FollowupReviewRecommended || s.ReviewLoopIteration != 0 || s.DiedMidFlight() {
		t.Fatalf("spec %+v", s)
	}
	if r := s.Result; r == nil || r.Status != SpecDone || r.BlockingCondition != "" || !strings.Contains(r.Text, "sign-up form") {
		t.Fatalf("result %+v", s.Result)
	}
	path = specFromTemplate(t, dir, SpecInReview, "", "")
	if s, err := ReadSpec(path); err != nil || !s.DiedMidFlight() || s.Result != nil {
		t.Fatalf("in-review spec %+v, %v", s, err)
	}
}

// The skeleton a halt before planning writes: only a status, then the result.
func TestReadSpecSkeleton(t *testing.T) {
	path := filepath.Join(t.TempDir(), "3-unresolved.md")
	writeFile(t, path, "---\r\nstatus: blocked\r\n---\r\n\r\n# Story 3\r\n\r\n## Auto Run Result\r\n\r\nStatus: blocked\r\nBlocking condition: story id not found in stories.yaml\r\n")
	s, err := ReadSpec(path)
	if err != nil || s.Status != SpecBlocked || s.Result == nil || s.Result.BlockingCondition != "story id not found in stories.yaml" {
		t.Fatalf("spec %+v, %v", s, err)
	}
	writeFile(t, path, "# no frontmatter\n")
	if _, err := ReadSpec(path); !errors.Is(err, ErrSpecInvalid) {
		t.Fatalf("err = %v", err)
	}
}

// A story's specs are the spec-*.md led by its key: not another story's
// whose key it leads (1-2 is not 1-20), nor other files.
func TestStorySprintSpecs(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"spec-1-2-account-settings.md", "spec-1-2-account-settings-2.md", "spec-1-20-reports.md",
		"spec-1-3-other.md", "spec-2-2-billing.md", "bmad-build-auto-result-1-2.md", "spec-1-2.txt"} {
		writeFile(t, filepath.Join(dir, name), "---\nstatus: done\n---\n")
	}
	got, err := StorySprintSpecs(dir, StoryKey{"1", 2})
	want := []string{filepath.Join(dir, "spec-1-2-account-settings-2.md"), filepath.Join(dir, "spec-1-2-account-settings.md")}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	if got, err := StorySprintSpecs(filepath.Join(dir, "none"), StoryKey{"1", 2}); len(got) != 0 || err != nil {
		t.Fatalf("no folder: %q, %v", got, err)
	}
}

// The spec a first dispatch created is the new spec-*.md led by the story's key.
func TestNewSprintSpec(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "spec-1-2-account-settings.md")
	writeFile(t, old, "---\nstatus: done\n---\n")
	before, err := SprintSpecs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := NewSprintSpec(dir, before, StoryKey{"1", 2}); got != "" || err != nil {
		t.Fatalf("before any dispatch: %q, %v", got, err)
	}
	fresh := filepath.Join(dir, "spec-1-2-account-settings-2.md")
	writeFile(t, fresh, "---\nstatus: draft\n---\n")
	writeFile(t, filepath.Join(dir, "spec-1-3-other.md"), "---\nstatus: draft\n---\n")
	if got, err := NewSprintSpec(dir, before, StoryKey{"1", 2}); got != fresh || err != nil {
		t.Fatalf("after: %q, %v", got, err)
	}
	writeFile(t, filepath.Join(dir, "spec-1-2-again.md"), "---\nstatus: draft\n---\n")
	if _, err := NewSprintSpec(dir, before, StoryKey{"1", 2}); !errors.Is(err, ErrSpecInvalid) || !strings.Contains(err.Error(), "2 new specs") {
		t.Fatalf("two new: %v", err)
	}
}

// SetSpecStatus changes the status line alone; a file without frontmatter
// is refused and left as it was.
func TestSetSpecStatusRewritesOnlyTheStatus(t *testing.T) {
	dir := realbmad.Project(t)
	path := specFromTemplate(t, dir, SpecBlocked, "abc123", "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: intent gap\n")
	before, _ := os.ReadFile(path)
	if err := SetSpecStatus(path, SpecReadyForDev); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	s, err := ReadSpec(path)
	if err != nil || s.Status != SpecReadyForDev || s.BaselineRevision != "abc123" || s.Result == nil || s.Result.BlockingCondition != "intent gap" {
		t.Fatalf("spec %+v (%v)", s, err)
	}
	if got := strings.Replace(string(after), "status: 'ready-for-dev'", "status: 'blocked'", 1); got != string(before) {
		t.Fatalf("more than the status changed:\n%s\n---\n%s", before, after)
	}
	plain := filepath.Join(dir, "plain.md")
	if err := os.WriteFile(plain, []byte("# no frontmatter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetSpecStatus(plain, SpecDraft); !errors.Is(err, ErrSpecInvalid) {
		t.Fatalf("no frontmatter: %v", err)
	}
	if data, _ := os.ReadFile(plain); string(data) != "# no frontmatter\n" {
		t.Fatalf("rewritten: %q", data)
	}
}
