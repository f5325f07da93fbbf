package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStoryFiles(t *testing.T) {
	p := openProject(t)
	f, err := p.StoryFile(StoryKey{"1", 2})
	if err != nil || filepath.Base(f) != "1-2-user-login.md" {
		t.Fatalf("StoryFile(1.2) = %s, %v", f, err)
	}
	if _, err := p.StoryFile(StoryKey{"2", 1}); !errors.Is(err, ErrStoryFileNotFound) || Code(err) != "story_file_not_found" {
		t.Errorf("StoryFile(2.1) err = %v, want story_file_not_found", err)
	}
	writeFiles(t, p.ArtifactsDir, map[string]string{
		"stories/1-2-login-again.md": "# dup\n",
		"1-2-user-login.context.xml": "<x/>",
		"code-review-1-2.md":         "not a story file",
	})
	files, err := p.StoryFiles(StoryKey{"1", 2})
	if err != nil || len(files) != 2 {
		t.Fatalf("StoryFiles(1.2) = %v, %v; want the file and the stories/ duplicate", files, err)
	}
	if _, err := p.StoryFile(StoryKey{"1", 2}); err == nil || !strings.Contains(err.Error(), "2 story files") {
		t.Errorf("StoryFile with two files: err = %v", err)
	}
}

func TestReadStoryFileStatus(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"Status: review\n": "review",
		"# Story 1.1: X\n\nStatus: ready-for-dev\n\n## Story\n":      "ready-for-dev",
		"# S\n\n**Status:** Ready for Dev\n":                         "ready-for-dev",
		"# S\n\n**Status**: DONE\n":                                  "done",
		"# S\n\n- Status: in_progress\n":                             "in-progress",
		"# S\n\n## Status\n\nReview\n\n## Story\n":                   "review",
		"# S\n\n```\nStatus: done\n```\n\nStatus: backlog\n":         "backlog",
		"---\nstatus: review\n---\n# S\n\nStatus: done (shadowed)\n": "review",
	}
	for content, want := range cases {
		path := filepath.Join(dir, "s.md")
		writeFiles(t, dir, map[string]string{"s.md": content})
		got, ok, err := ReadStoryFileStatus(path)
		if err != nil || !ok || got != want {
			t.Errorf("%q: status %q ok %v err %v, want %q", content, got, ok, err, want)
		}
	}
	writeFiles(t, dir, map[string]string{"none.md": "# S\n\nNo status here.\n"})
	if _, ok, err := ReadStoryFileStatus(filepath.Join(dir, "none.md")); ok || err != nil {
		t.Errorf("file without status: ok %v err %v", ok, err)
	}
	if _, _, err := ReadStoryFileStatus(filepath.Join(dir, "missing.md")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestSetStoryFileStatus(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ in, want string }{
		{"# S\n\nStatus: review\n\n## Story\n", "# S\n\nStatus: done\n\n## Story\n"},
		{"# S\n\n**Status:** Ready for Dev  \n", "# S\n\n**Status:** done  \n"},
		{"# S\r\n\r\nStatus: review\r\n", "# S\r\n\r\nStatus: done\r\n"},
		{"# S\n\n## Status\n\n  Review\n", "# S\n\n## Status\n\n  done\n"},
		{"# S\n\n## Story\n", "# S\n\nStatus: done\n\n## Story\n"},
		{"no title\n", "Status: done\n\nno title\n"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, "s.md")
		writeFiles(t, dir, map[string]string{"s.md": c.in})
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := SetStoryFileStatus(path, StatusDone); err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
			t.Errorf("%q: mode %v not kept", c.in, fi.Mode().Perm())
		}
	}
	if err := SetStoryFileStatus(filepath.Join(dir, "s.md"), "not a status"); !errors.Is(err, ErrInvalidStatus) {
		t.Errorf("bad status: err = %v", err)
	}
}

func TestProjectStoryStatusAndSetStoryStatus(t *testing.T) {
	p := openProject(t)
	st, err := p.StoryStatus(StoryKey{"1", 3})
	if err != nil || st.Sprint != StatusReadyForDev || st.File != StatusReadyForDev {
		t.Fatalf("StoryStatus(1.3) = %+v, %v", st, err)
	}
	if err := p.SetStoryStatus(StoryKey{"1", 3}, StatusReview); err != nil {
		t.Fatal(err)
	}
	st, err = p.StoryStatus(StoryKey{"1", 3})
	if err != nil || st.Sprint != StatusReview || st.File != StatusReview || !st.Is(StatusReview) || st.Is(StatusDone) {
		t.Errorf("after SetStoryStatus(1.3, review): %+v, %v", st, err)
	}
	// 2.3 is in neither the sprint status nor the epics: it is added with no slug.
	if err := p.SetStoryStatus(StoryKey{"2", 3}, StatusBacklog); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p.SprintStatusPath())
	if !strings.Contains(string(data), "  2-2-product-search: 'backlog'\n  2-3: backlog\n  epic-2-retrospective") {
		t.Errorf("2-3 not inserted after 2-2:\n%s", data)
	}
	// 2.1 has no story file: only the sprint status changes, keeping its slug.
	if err := p.SetStoryStatus(StoryKey{"2", 1}, StatusInProgress); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(p.SprintStatusPath())
	if !strings.Contains(string(data), "  2-1-product-list: in-progress\n") {
		t.Errorf("2-1 not updated:\n%s", data)
	}
}

func TestSetStoryStatusWithoutSprintStatus(t *testing.T) {
	p := openProject(t)
	if err := os.Remove(p.SprintStatusPath()); err != nil {
		t.Fatal(err)
	}
	if err := p.SetStoryStatus(StoryKey{"1", 2}, StatusDone); err != nil {
		t.Fatalf("story file only: %v", err)
	}
	if st, _, _ := ReadStoryFileStatus(filepath.Join(p.ArtifactsDir, "1-2-user-login.md")); st != StatusDone {
		t.Errorf("story file status = %q", st)
	}
	if err := p.SetStoryStatus(StoryKey{"2", 1}, StatusDone); !errors.Is(err, ErrStoryNotFound) {
		t.Errorf("no sprint status, no story file: err = %v, want ErrStoryNotFound", err)
	}
}
