package orchestrator

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/story-automator/story-automator/marker"
)

// killedRun stands for a SIGKILL: the run's goroutine stops where it is.
type killedRun struct{}

func TestKillRightAfterTheMarkerIsClaimedLeavesAResumableRun(t *testing.T) {
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	testHookMarkerClaimed = func() { panic(killedRun{}) }
	func() {
		defer func() {
			testHookMarkerClaimed = func() {}
			if r := recover(); r != (killedRun{}) {
				t.Fatalf("recovered %v", r)
			}
		}()
		_, _ = h.run(context.Background(), h.options())
	}()
	m, err := h.store().Read()
	if err != nil || m.Status != marker.StatusActive {
		t.Fatalf("marker %+v %v", m, err)
	}
	if _, err := LoadState(m.StateFile); err != nil {
		t.Fatalf("the marker names a state document that is not there: %v", err)
	}
	if _, err := h.resume(); err != nil {
		t.Fatalf("resume: %v", err)
	}
}

// crashAt runs stories 1-1 and 1-2 and kills the run, as SIGKILL would, at
// a point of 1-1's commit: from then on nothing the dead process does
// reaches the disk, git or the project. The marker is left active with a
// dead owner.
func crashAt(t *testing.T, h *harness, point string) {
	t.Helper()
	o := h.options()
	store := h.store()
	st, path, err := loadOrPlan(store, o, h.deps(), &stateLoader{})
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveState(path, st); err != nil {
		t.Fatal(err)
	}
	if err := claimMarker(context.Background(), store, st, o, h.clock); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dead atomic.Bool
	kill := func() { dead.Store(true); cancel() }
	h.repo.refuse = dead.Load
	switch point {
	case "after marking the story done":
		h.project.afterDone = func(key string) {
			if key == "1-1" {
				kill()
			}
		}
	case "after the commit":
		h.repo.afterCommit = func(req CommitRequest) {
			if req.Story.Key == "1-1" {
				kill()
			}
		}
	}
	eng := &Engine{Steps: h.steps, Backlog: h.project, Git: h.repo, Marker: store, Clock: h.clock, Policy: h.policy,
		Save: func(s *State) error {
			if dead.Load() {
				return nil
			}
			err := SaveState(path, s)
			if point == "after saving the commit" && s.Unit("1-1").Step(StepCommit).Status == StatusVerified {
				kill()
			}
			return err
		}}
	_, _ = eng.Run(ctx, st)
	if !dead.Load() {
		t.Fatalf("the run never reached %q", point)
	}
	h.project.afterDone, h.repo.afterCommit, h.repo.refuse = nil, nil, nil
	if _, err := store.Modify(context.Background(), func(m *marker.Marker) error {
		m.Status, m.PauseReason, m.OwnerPid = marker.StatusActive, "", 1<<30
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestKillAroundAStorysCommitThenResumeCommitsEveryStoryOnce(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"after marking the story done", "after the commit", "after saving the commit"} {
		t.Run(point, func(t *testing.T) {
			h := newHarness(t, "1-1", "1-2")
			h.project.retro["1"] = true
			h.project.statusFile = "sprint-status.yaml"
			h.project.repo = h.repo
			h.steps.script = func(_ context.Context, req StepRequest) StepResult {
				if req.Step == StepDev {
					h.repo.touch("src/" + req.Story + ".go")
				}
				return StepResult{FinalState: FinalCompleted}
			}
			crashAt(t, h, point)
			res, err := h.resume()
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if got := h.repo.committed(); !slices.Equal(got, []string{"1-1", "1-2"}) {
				t.Fatalf("commits %v", got)
			}
			files := h.repo.commitFiles()
			if !slices.Contains(files["1-1"], "src/1-1.go") || !slices.Contains(files["1-2"], "src/1-2.go") {
				t.Fatalf("commit contents %v", files)
			}
			st := h.saved(res)
			if st.Status != RunDone || st.Unit("1-1").Commit == "" || h.project.status("1-1") != StatusDone {
				t.Fatalf("after resume: %s, 1-1 commit %q status %s", st.Status, st.Unit("1-1").Commit, h.project.status("1-1"))
			}
			if snap, _ := h.repo.Snapshot(context.Background()); len(snap) != 0 {
				t.Fatalf("left uncommitted: %v", snap.Paths())
			}
		})
	}
}
