package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestSprintStatusEntries(t *testing.T) {
	s, err := ParseSprintStatus("before.yaml", readTestdata(t, "sprint-status/before.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range s.Entries() {
		keys = append(keys, e.Key+"="+e.Status)
	}
	want := "epic-1=in-progress 1-1-user-registration=done 1-2-user-login=review 1-3-password-reset=ready-for-dev " +
		"epic-1-retrospective=optional epic-2=backlog 2-1-product-list=backlog 2-2-product-search=backlog epic-2-retrospective=optional"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("entries\n got %s\nwant %s", got, want)
	}
	e, ok := s.Story(StoryKey{"1", 2})
	if !ok || e.Key != "1-2-user-login" || e.Slug != "user-login" || !e.IsStory() {
		t.Errorf("Story(1.2) = %+v, %v", e, ok)
	}
	if _, ok := s.Story(StoryKey{"3", 1}); ok {
		t.Error("Story(3.1) found in a file without it")
	}
}

// TestSprintStatusEditsKeepEverythingElse is the golden test: comments, blank
// lines, key order, quoting and trailing comments survive every kind of edit.
func TestSprintStatusEditsKeepEverythingElse(t *testing.T) {
	s, err := ParseSprintStatus("before.yaml", readTestdata(t, "sprint-status/before.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return s.SetStory(StoryKey{"1", 2}, "", StatusDone) },
		func() error { return s.Set("epic-1", StatusDone) },
		func() error { return s.Set("epic-1-retrospective", StatusDone) },
		func() error { return s.SetStory(StoryKey{"2", 2}, "", StatusInProgress) },
		func() error { return s.SetStory(StoryKey{"2", 3}, "product-reviews", StatusReadyForDev) },
		func() error { return s.SetStory(StoryKey{"1", 1}, "", StatusDone) }, // unchanged
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
	}
	want := readTestdata(t, "sprint-status/after.yaml")
	if got := s.Bytes(); string(got) != string(want) {
		t.Errorf("after edits:\n%s\nwant:\n%s", got, want)
	}
}

func TestSprintStatusInsertions(t *testing.T) {
	cases := []struct {
		name, in, want string
		edit           func(*SprintStatus) error
	}{
		{
			name: "empty mapping",
			in:   "project: x\ndevelopment_status:\n",
			want: "project: x\ndevelopment_status:\n  1-1-setup: backlog\n",
			edit: func(s *SprintStatus) error { return s.SetStory(StoryKey{"1", 1}, "setup", StatusBacklog) },
		},
		{
			name: "no trailing newline, four-space indent",
			in:   "development_status:\n    epic-1: backlog\n    1-1-a: done",
			want: "development_status:\n    epic-1: backlog\n    1-1-a: done\n    1-2: review\n",
			edit: func(s *SprintStatus) error { return s.SetStory(StoryKey{"1", 2}, "", StatusReview) },
		},
		{
			name: "new epic goes to the end",
			in:   "development_status:\n  epic-1: done\n  1-1-a: done\n  # tail comment\nother: 1\n",
			want: "development_status:\n  epic-1: done\n  1-1-a: done\n  auth-1-login: backlog\n  # tail comment\nother: 1\n",
			edit: func(s *SprintStatus) error { return s.SetStory(StoryKey{"auth", 1}, "login", StatusBacklog) },
		},
		{
			name: "double quotes kept",
			in:   "development_status:\n  1-1-a: \"review\" # note\n",
			want: "development_status:\n  1-1-a: \"done\" # note\n",
			edit: func(s *SprintStatus) error { return s.SetStory(StoryKey{"1", 1}, "", StatusDone) },
		},
	}
	for _, c := range cases {
		s, err := ParseSprintStatus(c.name, []byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := c.edit(s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(s.Bytes()) != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, s.Bytes(), c.want)
		}
	}
}

func TestSprintStatusRefusals(t *testing.T) {
	for name, in := range map[string]string{
		"not yaml":          "development_status: [\n",
		"no mapping":        "- a\n- b\n",
		"no dev status":     "project: x\n",
		"dev status a list": "development_status:\n  - 1-1\n",
		"nested value":      "development_status:\n  1-1-a:\n    status: done\n",
	} {
		if _, err := ParseSprintStatus(name, []byte(in)); !errors.Is(err, ErrSprintInvalid) || Code(err) != "sprint_status_invalid" {
			t.Errorf("%s: err = %v, want sprint_status_invalid", name, err)
		}
	}
	s, err := ParseSprintStatus("flow", []byte("development_status: {1-1-a: done}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetStory(StoryKey{"1", 2}, "", StatusDone); !errors.Is(err, ErrSprintInvalid) {
		t.Errorf("insert into a flow mapping: err = %v, want ErrSprintInvalid", err)
	}
	if err := s.SetStory(StoryKey{"1", 1}, "", "Done!"); !errors.Is(err, ErrInvalidStatus) {
		t.Errorf("bad status word: err = %v, want ErrInvalidStatus", err)
	}
	if err := s.SetStory(StoryKey{Epic: "1"}, "", StatusDone); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("epic key: err = %v, want ErrInvalidKey", err)
	}
	block, err := ParseSprintStatus("block", []byte("development_status:\n  1-1-a: >\n    done\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := block.SetStory(StoryKey{"1", 1}, "", StatusReview); !errors.Is(err, ErrSprintInvalid) {
		t.Errorf("folded value: err = %v, want ErrSprintInvalid", err)
	}
}

func TestUpdateSprintStatusWritesAtomicallyKeepingMode(t *testing.T) {
	root := copyProject(t)
	p, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p.SprintStatusPath(), 0o664); err != nil {
		t.Fatal(err)
	}
	err = p.UpdateSprintStatus(func(s *SprintStatus) error { return s.SetStory(StoryKey{"1", 3}, "", StatusInProgress) })
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p.SprintStatusPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "  1-3-password-reset: in-progress\n") || !strings.Contains(string(data), "# STATUS DEFINITIONS:") {
		t.Errorf("sprint-status after update:\n%s", data)
	}
	if fi, _ := os.Stat(p.SprintStatusPath()); fi.Mode().Perm() != 0o664 {
		t.Errorf("mode = %v, want 0664 kept", fi.Mode().Perm())
	}
	if fi, err := os.Stat(filepath.Join(root, StateDir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir for the lock: %v %v", fi, err)
	}
	failing := errors.New("no")
	if err := p.UpdateSprintStatus(func(*SprintStatus) error { return failing }); !errors.Is(err, failing) {
		t.Errorf("fn error not returned: %v", err)
	}
}

func TestReadSprintStatusMissing(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, DefaultArtifactsDir)
	p, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReadSprintStatus(); !errors.Is(err, ErrSprintNotFound) || Code(err) != "sprint_status_not_found" {
		t.Errorf("err = %v, want sprint_status_not_found", err)
	}
}

// TestConcurrentStatusUpdatesLoseNothing is what --parallel relies on: stories
// updated side by side each keep their change.
func TestConcurrentStatusUpdatesLoseNothing(t *testing.T) {
	p := openProject(t)
	var keys []StoryKey
	for n := 1; n <= 12; n++ {
		keys = append(keys, StoryKey{"5", n})
	}
	errs := make(chan error, len(keys))
	for _, k := range keys {
		go func() {
			// A Layout per goroutine, as separate processes would have.
			q, err := Open(p.Root)
			if err == nil {
				err = q.UpdateSprintStatus(func(s *SprintStatus) error { return s.SetStory(k, "s", StatusInProgress) })
			}
			errs <- err
		}()
	}
	for range keys {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s, err := p.ReadSprintStatus()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if e, ok := s.Story(k); !ok || e.Status != StatusInProgress {
			t.Errorf("story %s lost: %+v %v", k.Dotted(), e, ok)
		}
	}
	if !strings.Contains(string(s.Bytes()), "# STATUS DEFINITIONS:") {
		t.Error("comments lost")
	}
}
