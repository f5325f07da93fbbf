package orchestrator

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func journalState() *State {
	s := &State{Version: StateVersion, RunID: "run-j", Status: RunRunning, StartedAt: "2026-01-01T00:00:00Z",
		Config: RunConfig{Stories: "all", Agent: "sim", Parallel: 1}}
	for _, k := range []string{"1-1", "1-2"} {
		u := &Unit{Key: k, Kind: KindStory, Epic: "1", Dotted: "1." + k[2:], Status: StatusPending}
		for _, name := range StorySteps() {
			u.Steps = append(u.Steps, &StepState{Name: name, Status: StatusPending})
		}
		s.Units = append(s.Units, u)
	}
	return s
}

func stateJSON(t *testing.T, s *State) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkpointedJournal starts a journal for a fresh run document with
// journalState checkpointed in it.
func checkpointedJournal(t *testing.T) (string, *State, *Journal) {
	t.Helper()
	doc := filepath.Join(t.TempDir(), "run-j.md")
	s := journalState()
	j := NewJournal(doc)
	if err := j.Checkpoint(s); err != nil {
		t.Fatal(err)
	}
	return doc, s, j
}

// copyRun copies the document and its journal as a kill would leave them.
func copyRun(t *testing.T, doc, dir string) string {
	t.Helper()
	to := filepath.Join(dir, filepath.Base(doc))
	for _, p := range []string{doc, JournalPath(doc)} {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// A run killed after any change resumes from exactly that change: the
// document and the journal together always hold the whole state.
func TestJournalHoldsEveryChangeAtEveryMoment(t *testing.T) {
	t.Parallel()
	doc, s, j := checkpointedJournal(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u1, u2 := s.Units[0], s.Units[1]
	changes := []struct {
		unit *Unit
		fn   func()
	}{
		{u1, func() { u1.Status = StatusRunning }},
		{u1, func() {
			u1.Steps[1].Status = StatusRunning
			u1.Steps[1].Attempts = append(u1.Steps[1].Attempts, Attempt{N: 1, Agent: "sim", Role: "dev", StartedAt: "t"})
		}},
		{u1, func() { u1.Steps[1].Attempts[0].Session = "sa-x" }},
		{nil, func() { s.addLog(now, "1.1", "dev", "the marker is gone") }},
		{u2, func() { u2.Status = StatusRunning; s.addLog(now, "1.2", "", "started") }},
		{u1, func() {
			u1.Steps[1].Status, u1.Steps[1].VerifiedAt = StatusVerified, "t2"
			s.addLog(now, "1.1", "dev", "verified")
			s.addLog(now, "1.1", "dev", "another line")
		}},
		{u2, func() {
			s.Escalation = &Escalation{Unit: "1.2", Step: "create", Reason: "why", Action: "do"}
			u2.Status = StatusEscalated
		}},
	}
	for i, c := range changes {
		c.fn()
		if err := j.Change(s, c.unit); err != nil {
			t.Fatal(err)
		}
		got, err := LoadState(copyRun(t, doc, t.TempDir()))
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		if g, w := stateJSON(t, got), stateJSON(t, s); g != w {
			t.Fatalf("after change %d the files hold\n%s\nwant\n%s", i, g, w)
		}
		if i == 3 {
			// A checkpoint in the middle: the document takes over, the journal goes.
			if err := j.Checkpoint(s); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(JournalPath(doc)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the journal outlived the checkpoint: %v", err)
			}
		}
	}
	if !j.Dirty() {
		t.Fatal("changes since the checkpoint, yet not dirty")
	}
}

// A kill while a change is being written leaves a last line without its
// newline: the run never acted on it, and loading ignores it.
func TestJournalIgnoresATornLastLine(t *testing.T) {
	t.Parallel()
	doc, s, j := checkpointedJournal(t)
	s.Units[0].Status = StatusRunning
	if err := j.Change(s, s.Units[0]); err != nil {
		t.Fatal(err)
	}
	want := stateJSON(t, s)
	f, err := os.OpenFile(JournalPath(doc), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"seq":2,"run":{"status":"paus`); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(doc)
	if err != nil {
		t.Fatal(err)
	}
	if stateJSON(t, got) != want {
		t.Fatalf("the torn line changed the state:\n%s", stateJSON(t, got))
	}
	// A broken line that is not the last is corruption, and says so.
	if err := os.WriteFile(JournalPath(doc), []byte("{broken\n{\"seq\":9}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadState(doc); err == nil {
		t.Fatal("a broken journal line loaded without an error")
	}
}

// A journal a checkpoint could not remove (killed between the two) holds
// only changes the document already has: they are not applied again.
func TestJournalOlderThanTheDocumentIsIgnored(t *testing.T) {
	t.Parallel()
	doc, s, j := checkpointedJournal(t)
	s.addLog(time.Now(), "", "", "one")
	if err := j.Change(s, nil); err != nil {
		t.Fatal(err)
	}
	stale, err := os.ReadFile(JournalPath(doc))
	if err != nil {
		t.Fatal(err)
	}
	s.Log = s.Log[:0] // a later change the document holds, undoing the journalled one
	if err := j.Checkpoint(s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(JournalPath(doc), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Log) != 0 {
		t.Fatalf("a change older than the document was replayed: %+v", got.Log)
	}
}
