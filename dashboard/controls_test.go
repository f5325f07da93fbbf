package dashboard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testtier"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/status"
)

// p pauses the marker as `marker pause` does, with the dashboard's reason.
func TestPauseIsMarkerPause(t *testing.T) {
	root := t.TempDir()
	getenv := func(string) string { return "" }
	ctl := Controls{Root: root, Getenv: getenv}
	if note := ctl.Pause(context.Background()); note.err == nil {
		t.Fatal("pausing a project with no marker must say so")
	}
	store := marker.NewStore(root, getenv)
	if _, err := store.Create(context.Background(), &marker.Marker{Version: 1, Mode: marker.ModeStory, Status: marker.StatusActive}, false); err != nil {
		t.Fatal(err)
	}
	if note := ctl.Pause(context.Background()); note.err != nil {
		t.Fatal(note.err)
	}
	m, err := store.Read()
	if err != nil || m.Status != marker.StatusPaused || m.PauseReason != pauseReason {
		t.Fatalf("marker %+v (%v): want paused from the dashboard", m, err)
	}
}

// r starts `run --resume` on the run's socket, detached, its output in the
// run's log beside its state document.
func TestResumeStartsRunResumeOnTheRunsSocketIntoItsLog(t *testing.T) {
	testtier.Integration(t)
	dir := t.TempDir()
	exe := filepath.Join(dir, "story-automator")
	script := "#!/bin/sh\necho \"args: $*\"\necho \"session leader: $(ps -o sid= -p $$ | tr -d ' ') = $$\"\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "run-1.md")
	note := Controls{Root: dir, Getenv: os.Getenv, Exe: exe, Environ: os.Environ()}.Resume(state, "story-x")
	if note.err != nil {
		t.Fatal(note.err)
	}
	log := strings.TrimSuffix(state, ".md") + ".log"
	want := "args: --project-root " + dir + " --tmux-socket story-x run --resume"
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(log) // written by the started process: polled
		if strings.Contains(string(data), "session leader") {
			if !strings.Contains(string(data), want) {
				t.Fatalf("log:\n%s\nwant %q", data, want)
			}
			if f := strings.Fields(string(data)[strings.Index(string(data), "session leader"):]); f[2] != f[4] {
				t.Fatalf("the resumed run is not in a session of its own: %s", data)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing in %s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(note.text, log) {
		t.Fatalf("the note must name the log: %q", note.text)
	}
}

// A waiting run's countdown comes from its marker's wait, however this
// build keeps that field.
func TestWaitingReadsTheMarkersWait(t *testing.T) {
	st := fixtureState(2)
	st.Status, st.PauseReason = runWaiting, "a limit"
	data := `{"version":1,"mode":"story","status":"active","waiting":{"reason":"usage_limit","agent":"claude","resumesAt":"2026-11-22T12:14:12Z"}}`
	m, err := marker.Decode([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	alive := &status.Run{Status: st.SeenStatus(true)}
	w := waitingOf(alive, st, m)
	if w == nil || w.Reason != "usage_limit (claude)" || !w.Until.Equal(fixedNow.Add(4*time.Minute+12*time.Second)) {
		t.Fatalf("wait %+v", w)
	}
	if waitingOf(&status.Run{Status: orchestrator.RunRunning}, fixtureState(2), m) != nil {
		t.Fatal("a running run is not waiting")
	}
	// Its orchestrator gone, nobody waits: the run is interrupted.
	if w := waitingOf(&status.Run{Status: st.SeenStatus(false)}, st, m); w != nil {
		t.Fatalf("an interrupted run waits: %+v", w)
	}
}
