package workflows

import (
	"os"
	"strings"
	"testing"
	"time"
)

// rewriteSameStat replaces a file's content by one of the same length and
// gives it back its old modification time: what an edit inside one tick of
// the file system's clock looks like to stat.
func rewriteSameStat(t *testing.T, path, from, to string) {
	t.Helper()
	if len(from) != len(to) {
		t.Fatalf("%q and %q differ in length", from, to)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), from) {
		t.Fatalf("%s has no %q", path, from)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), from, to, 1)), fi.Mode()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// The parse cache is keyed by content, never by size and time: an edit that
// stat cannot see is still seen.
func TestStoriesSeeEveryEditThroughTheParseCache(t *testing.T) {
	p := openProject(t)
	first, err := p.Stories()
	if err != nil {
		t.Fatal(err)
	}
	epics, err := p.EpicFiles()
	if err != nil || len(epics) == 0 {
		t.Fatalf("epic files %v %v", epics, err)
	}
	rewriteSameStat(t, epics[0], "User Login", "User Logon")
	rewriteSameStat(t, p.SprintStatusPath(), "1-2-user-login: review", "1-2-user-login: done  ")
	again, err := p.Stories()
	if err != nil {
		t.Fatal(err)
	}
	if again[1].Title != "User Logon" || again[1].Status != StatusDone {
		t.Fatalf("after the edits 1.2 = %+v", again[1])
	}
	// What a caller does to its copy does not reach the next caller.
	again[0].Title = "scribbled"
	third, _ := p.Stories()
	if third[0].Title != first[0].Title {
		t.Fatalf("a caller's change reached the cache: %q", third[0].Title)
	}
	if st, err := p.StoryStatus(StoryKey{"1", 2}); err != nil || st.Sprint != StatusDone {
		t.Fatalf("status of 1.2 = %+v %v", st, err)
	}
}
