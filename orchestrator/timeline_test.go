package orchestrator

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"
)

// Linking a timeline keeps every change the journal holds, names the file
// in the document and in the machine state, and a later checkpoint (a
// resumed run writing its state) keeps naming it.
func TestLinkTimelineKeepsTheJournalsChangesAndSurvivesACheckpoint(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	doc, s, j := checkpointedJournal(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Units[0].Status = StatusRunning
	s.addLog(now, "1.1", "dev", "a change only the journal holds")
	if err := j.Change(s, s.Units[0]); err != nil {
		t.Fatal(err)
	}
	if err := LinkTimeline(root, doc, "/tmp/run.html", now); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(JournalPath(doc)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the journal is still there: %v", err)
	}
	got, err := LoadState(doc)
	if err != nil {
		t.Fatal(err)
	}
	if got.Timeline == nil || got.Timeline.Path != "/tmp/run.html" || got.Units[0].Status != StatusRunning ||
		got.Log[len(got.Log)-1].Message != "a change only the journal holds" {
		t.Fatalf("linked state %+v", got)
	}
	data, _ := os.ReadFile(doc)
	if !strings.Contains(string(data), "**Timeline:** `/tmp/run.html` (HTML, written 2026-01-02 03:04:05 UTC") {
		t.Fatalf("the document does not name the page:\n%s", data)
	}
	// A resumed run's own checkpoint still names it.
	got.Units[1].Status = StatusRunning
	if err := NewJournal(doc).Checkpoint(got); err != nil {
		t.Fatal(err)
	}
	if again, _ := LoadState(doc); again.Timeline == nil {
		t.Fatal("a checkpoint dropped the timeline")
	}
}

func TestLinkTimelineLeavesALockedRunAlone(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	doc, _, _ := checkpointedJournal(t)
	lock, err := AcquireRunLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	before, _ := os.ReadFile(doc)
	if err := LinkTimeline(root, doc, "/tmp/run.html", time.Now()); !errors.Is(err, ErrRunActive) {
		t.Fatalf("LinkTimeline under a held run lock: %v", err)
	}
	if after, _ := os.ReadFile(doc); string(after) != string(before) {
		t.Fatal("the document changed under a held run lock")
	}
}
