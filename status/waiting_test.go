package status

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

var waitNow = time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)

func waitingState(root string) *orchestrator.State {
	return &orchestrator.State{Version: orchestrator.StateVersion, RunID: "run-w", Status: orchestrator.RunWaiting, ProjectRoot: root,
		Wait: &orchestrator.LimitWait{Since: marker.Timestamp(waitNow.Add(-time.Minute)), Until: "2026-01-02T17:00:10Z",
			ResetsAt: "2026-01-02T17:00:00Z", Reason: "usage_limit", Agent: "claude", Unit: "1.1", Step: "dev"}}
}

func TestStatusShowsAWaitingRunWithACountdown(t *testing.T) {
	root := t.TempDir()
	st := waitingState(root)
	if err := orchestrator.SaveState(orchestrator.RunsDir(root)+"/run-w.md", st); err != nil {
		t.Fatal(err)
	}
	v, _ := Gather(root, func(string) string { return "" }, func() time.Time { return waitNow }, &bytes.Buffer{},
		func() ([]Session, []string) { return nil, nil })
	var b bytes.Buffer
	WriteText(&b, v, waitNow)
	if !strings.Contains(b.String(), "`story-automator run --resume` waits the rest") {
		t.Fatalf("a waiting run whose process is gone goes on only with --resume:\n%s", b.String())
	}
	lock, err := orchestrator.AcquireRunLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	v, _ = Gather(root, func(string) string { return "" }, func() time.Time { return waitNow }, &bytes.Buffer{},
		func() ([]Session, []string) { return nil, nil })
	b.Reset()
	WriteText(&b, v, waitNow)
	text := b.String()
	for _, want := range []string{"· waiting ·", "Waiting: claude met a limit (usage_limit), it lifts at 2026-01-02 17:00:00 UTC",
		"goes on by itself at 2026-01-02 17:00:10 UTC (in 2h0m10s)"} {
		if !strings.Contains(text, want) {
			t.Fatalf("status lacks %q:\n%s", want, text)
		}
	}
	fields, err := v.Fields()
	if err != nil {
		t.Fatal(err)
	}
	run := fields["run"].(map[string]any)
	w, _ := run["wait"].(map[string]any)
	if run["status"] != "waiting" || w["reason"] != "usage_limit" || w["agent"] != "claude" ||
		w["resetsAt"] != "2026-01-02T17:00:00Z" || w["until"] != "2026-01-02T17:00:10Z" || w["remainingSeconds"] != float64(7210) {
		t.Fatalf("status --json run %v", run)
	}
	// Later the countdown has moved on.
	b.Reset()
	WriteText(&b, v, waitNow.Add(2*time.Hour))
	if !strings.Contains(b.String(), "(in 10s)") {
		t.Fatalf("countdown:\n%s", b.String())
	}
}

func TestStatusOfARunStoppedInAWaitSaysResumeWaitsTheRest(t *testing.T) {
	wt := waitingState("").Wait
	if got := WaitText(wt, orchestrator.RunPaused, waitNow); !strings.Contains(got, "`story-automator run --resume` waits the rest") {
		t.Fatal(got)
	}
	if got := WaitText(wt, orchestrator.RunPaused, waitNow.Add(3*time.Hour)); !strings.Contains(got, "goes on at once") {
		t.Fatal(got)
	}
}

func TestStatusWaitTreatsAWaitingRunAsStillGoing(t *testing.T) {
	st := waitingState("")
	r, final := waitVerdict(st, "doc.md", nil, true)
	if final || r.Wait == nil {
		t.Fatalf("a waiting run is still going: final %v %+v", final, r)
	}
	root := t.TempDir()
	lock, err := orchestrator.AcquireRunLock(root)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	st.ProjectRoot = root
	st.Wait.Until = marker.Timestamp(time.Now().Add(time.Hour))
	if err := orchestrator.SaveState(orchestrator.RunsDir(root)+"/run-w.md", st); err != nil {
		t.Fatal(err)
	}
	res, err := WaitRun(context.Background(), root, func(string) string { return "" }, 20*time.Millisecond)
	if err != nil || res.Outcome != WaitRunning || !strings.Contains(res.Message, "waiting for a limit to lift") ||
		!strings.Contains(res.Message, "claude met a limit (usage_limit)") || WaitFields(res)["wait"] == nil {
		t.Fatalf("status --wait on a waiting run: %+v %v", res, err)
	}
}
