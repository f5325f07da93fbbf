package status

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

func TestWaitVerdictNamesWhatHappenedAndTheNextCommand(t *testing.T) {
	esc := &orchestrator.Escalation{Reason: "dev story of 1.2: not verified", Action: "fix it"}
	cases := []struct {
		st       orchestrator.State
		lock     bool
		final    bool
		outcome  string
		nextPart string
	}{
		{orchestrator.State{Status: orchestrator.RunRunning}, true, false, "", ""},
		{orchestrator.State{Status: orchestrator.RunDone}, false, true, WaitDone, "story-automator runs"},
		{orchestrator.State{Status: orchestrator.RunPaused, Escalation: esc}, false, true, WaitEscalated, "run --resume"},
		{orchestrator.State{Status: orchestrator.RunPaused, PauseReason: "interrupted"}, false, true, WaitPaused, "run --resume"},
		{orchestrator.State{Status: orchestrator.RunRunning}, false, true, WaitDead, "run --resume"},
	}
	for _, c := range cases {
		r, final := waitVerdict(&c.st, "doc.md", &marker.Marker{CurrentStory: "1.2", CurrentStep: "dev"}, c.lock)
		if final != c.final || r.Outcome != c.outcome && c.final {
			t.Errorf("%s lock=%v: final %v outcome %q, want %v %q", c.st.Status, c.lock, final, r.Outcome, c.final, c.outcome)
		}
		if c.final && (r.Message == "" || !strings.Contains(r.Next, c.nextPart)) {
			t.Errorf("%s: message %q next %q", c.st.Status, r.Message, r.Next)
		}
	}
}

// A wait on a running run wakes when its state document changes and ends
// when the run is done; with a bound, it returns "running" and says to call again.
func TestWaitRunWakesOnTheStateDocument(t *testing.T) {
	root := t.TempDir()
	lock, err := orchestrator.AcquireRunLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	path := orchestrator.RunsDir(root) + "/run-1.md"
	st := &orchestrator.State{Version: 1, RunID: "run-1", Status: orchestrator.RunRunning, ProjectRoot: root}
	if err := orchestrator.SaveState(path, st); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	r, err := WaitRun(context.Background(), root, getenv, 50*time.Millisecond)
	if err != nil || r.Outcome != WaitRunning || !strings.Contains(r.Next, "--return-after 50ms") {
		t.Fatalf("bounded wait: %+v %v", r, err)
	}
	done := make(chan WaitResult, 1)
	go func() {
		r, _ := WaitRun(context.Background(), root, getenv, 0)
		done <- r
	}()
	st.Status = orchestrator.RunDone
	if err := orchestrator.SaveState(path, st); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.Outcome != WaitDone {
		t.Fatalf("wait ended with %+v", r)
	}
}

func TestWaitExitAndFields(t *testing.T) {
	for outcome, want := range map[string]int{WaitDone: 0, WaitEscalated: 3, WaitPaused: 3,
		WaitDead: 4, WaitNoRun: 6, WaitRunning: 8} {
		if got := WaitExit(outcome); got != want {
			t.Errorf("%s: exit %d, want %d", outcome, got, want)
		}
	}
	f := WaitFields(WaitResult{Outcome: WaitNoRun, Next: "run"})
	if len(f) != 9 || f["runId"] != "" || f["next"] != "run" || f["storiesDone"] != 0 {
		t.Fatalf("%v", f)
	}
}
