package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

func TestARunSweepsTheTempsKilledWritesLeftAndNothingElse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	store := h.store()
	ours := []string{
		filepath.Join(RunsDir(h.root), ".run-20260101-000000-abcd.md.tmp-123456"),
		filepath.Join(store.Dir(), "."+filepath.Base(store.Path)+".tmp-98765"),
	}
	theirs := []string{
		filepath.Join(RunsDir(h.root), ".notes.md.tmp-1"),                     // not a state document's
		filepath.Join(store.Dir(), "."+filepath.Base(store.Path)+".tmp-mine"), // not digits
		filepath.Join(store.Dir(), ".settings.json.tmp-42"),                   // another tool's file
		filepath.Join(h.root, "src", ".main.go.tmp-7"),                        // outside what the run writes
	}
	for _, p := range append(append([]string{}, ours...), theirs...) {
		gittest.Write(t, p, "half")
	}
	if _, err := h.run(context.Background(), h.options()); err != nil {
		t.Fatal(err)
	}
	for _, p := range ours {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("temp %s left: %v", p, err)
		}
	}
	for _, p := range theirs {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}

func TestAResumeIsNotBlockedByAReusedOwnerPid(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	crashAt(t, h, "after the commit")
	// The dead run's pid now names an unrelated live process.
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	store := h.store()
	if _, err := store.Update(context.Background(), func(m *marker.Marker, err error) (*marker.Marker, error) {
		if err != nil {
			return nil, err
		}
		m.OwnerPid = other.Process.Pid
		return m, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.run(context.Background(), h.options()); !errors.Is(err, ErrRunPaused) {
		t.Fatalf("a new run: %v, want run_paused (the old run is dead)", err)
	}
	if _, err := h.resume(); err != nil {
		t.Fatalf("resume: %v", err)
	}
}

func TestCreateRefusesAStoryTheEpicsDoNotDeclare(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.project.epicErr = &Blocker{Code: "story_not_in_epics", Action: "declare it", Err: errors.New("story 1.1 is not declared in epics.md")}
	res, err := h.run(context.Background(), h.options())
	if !errors.Is(err, ErrEscalated) || res.State.Escalation == nil || res.State.Escalation.Code != "story_not_in_epics" {
		t.Fatalf("run: %v %+v", err, res.State.Escalation)
	}
	if len(h.steps.reqs) != 0 {
		t.Fatalf("an agent was started to write the story from nothing: %v", h.steps.reqs)
	}
}

func TestARunStopsAtOnceWhenTheUsersIndexIsLocked(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	lock := filepath.Join(h.root, ".git", "index.lock")
	h.repo.repairErr = &Blocker{Code: "git_index_locked", Err: fmt.Errorf("%w: %s exists", ErrGitIndexLocked, lock)}
	res, err := h.run(context.Background(), h.options())
	if Code(err) != "git_index_locked" || res != nil || !strings.Contains(err.Error(), lock) {
		t.Fatalf("run: %v (%s), %+v", err, Code(err), res)
	}
	if docs := runDocuments(h.root); len(docs) != 0 || len(h.steps.reqs) != 0 {
		t.Fatalf("the refused run started: %v %v", docs, h.steps.reqs)
	}
}
