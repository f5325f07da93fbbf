package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

func TestWaitVerdictNamesWhatHappenedAndTheNextCommand(t *testing.T) {
	t.Parallel()
	esc := &Escalation{Reason: "dev story of 1.2: not verified", Action: "fix it"}
	cases := []struct {
		st       State
		lock     bool
		final    bool
		outcome  string
		nextPart string
	}{
		{State{Status: RunRunning}, true, false, "", ""},
		{State{Status: RunDone}, false, true, WaitDone, "story-automator runs"},
		{State{Status: RunPaused, Escalation: esc}, false, true, WaitEscalated, "run --resume"},
		{State{Status: RunPaused, PauseReason: "interrupted"}, false, true, WaitPaused, "run --resume"},
		{State{Status: RunRunning}, false, true, WaitDead, "run --resume"},
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
	t.Parallel()
	root := t.TempDir()
	lock, err := AcquireRunLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	path := RunsDir(root) + "/run-1.md"
	st := &State{Version: 1, RunID: "run-1", Status: RunRunning, ProjectRoot: root}
	if err := SaveState(path, st); err != nil {
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
	st.Status = RunDone
	if err := SaveState(path, st); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.Outcome != WaitDone {
		t.Fatalf("wait ended with %+v", r)
	}
}
