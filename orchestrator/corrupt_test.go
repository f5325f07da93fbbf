package orchestrator

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// corruptCopies lists what path was moved aside to.
func corruptCopies(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".corrupt-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestANewRunMovesACorruptOldStateDocumentAsideAndGoesOn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	old := filepath.Join(RunsDir(h.root), "run-20250101-000000-abcd.md")
	writeFile(t, old, "# Story run\n\n```json story-automator-state\n{\"version\": 1, \"runId\": \n```\n")
	writeFile(t, JournalPath(old), "{\"seq\": 1}\n")
	res := h.runOK()
	moved := corruptCopies(t, old)
	if len(moved) != 1 || !strings.HasSuffix(moved[0], ".corrupt-20260102T150405Z") {
		t.Fatalf("moved aside: %v", moved)
	}
	if data, _ := os.ReadFile(moved[0]); !strings.Contains(string(data), "\"runId\": \n") {
		t.Fatalf("the corrupt document was not kept as it was: %q", data)
	}
	if j := corruptCopies(t, JournalPath(old)); len(j) != 1 {
		t.Fatalf("its journal: %v", j)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], old) || !strings.Contains(res.Warnings[0], "moved it aside to "+moved[0]) {
		t.Fatalf("warnings %q", res.Warnings)
	}
	if docs := runDocuments(h.root); len(docs) != 1 || docs[0] != res.StatePath {
		t.Fatalf("documents left: %v", docs)
	}
}

func TestResumeOfACorruptStateDocumentFailsWithStateCorruptAndKeepsItAside(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	res := h.runUntilEscalatedByCrashes()
	writeFile(t, res.StatePath, "garbage")
	_, err := h.resume()
	if Code(err) != "state_corrupt" || !strings.Contains(err.Error(), "moved it aside to "+res.StatePath+".corrupt-") ||
		!strings.Contains(err.Error(), "marker remove") {
		t.Fatalf("resume of a corrupt document: %s %v", Code(err), err)
	}
	if m := corruptCopies(t, res.StatePath); len(m) != 1 {
		t.Fatalf("moved aside: %v", m)
	}
}

func TestACorruptJournalLineKeepsTheChangesBeforeIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	res := h.runOK()
	path, st := res.StatePath, res.State
	line := func(seq int64, pause string) string {
		f := fieldsOf(st)
		f.PauseReason = pause
		data, _ := json.Marshal(journalRecord{Seq: seq, Run: f, LogFrom: len(st.Log)})
		return string(data) + "\n"
	}
	writeFile(t, JournalPath(path), line(st.Seq+1, "kept")+"{\"seq\": garbage\n"+line(st.Seq+3, "lost"))
	if _, err := LoadState(path); !errors.Is(err, ErrStateCorrupt) {
		t.Fatalf("a plain load: %v", err)
	}
	l := stateLoader{moveAside: true, now: func() time.Time { return time.Date(2026, 7, 8, 9, 10, 11, 0, time.UTC) }}
	got, err := l.load(path)
	if err != nil || got.PauseReason != "kept" {
		t.Fatalf("load: %+v %v", got, err)
	}
	if len(l.warnings) != 1 || !strings.Contains(l.warnings[0], "line 2") ||
		!strings.Contains(l.warnings[0], JournalPath(path)+".corrupt-20260708T091011Z") {
		t.Fatalf("warnings %q", l.warnings)
	}
	again, err := LoadState(path) // the kept changes are in the document now
	if err != nil || again.PauseReason != "kept" {
		t.Fatalf("reloaded: %+v %v", again, err)
	}
}

func TestStatusMovesACorruptDocumentAsideOnlyWhenNoRunHoldsTheProject(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	res := h.runOK()
	newer := filepath.Join(RunsDir(h.root), "run-29990101-000000-ffff.md")
	writeFile(t, newer, "no machine state here")
	lock, err := AcquireRunLock(h.root)
	if err != nil {
		t.Fatal(err)
	}
	st, path, warnings := ReadLatestState(h.store(), h.root, time.Now)
	if st != nil || path != newer || len(warnings) != 1 || !strings.Contains(warnings[0], "left in place") {
		t.Fatalf("with the run lock held: %v %s %q", st, path, warnings)
	}
	if m := corruptCopies(t, newer); len(m) != 0 {
		t.Fatalf("moved aside under a live run: %v", m)
	}
	lock.Release()
	st, path, warnings = ReadLatestState(h.store(), h.root, time.Now)
	if st == nil || path != res.StatePath || len(warnings) != 1 || !strings.Contains(warnings[0], "moved it aside to "+newer+".corrupt-") {
		t.Fatalf("with no run: %v %s %q", st, path, warnings)
	}
	if m := corruptCopies(t, newer); len(m) != 1 {
		t.Fatalf("moved aside: %v", m)
	}
}
