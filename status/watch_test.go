package status

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

// --watch redraws until the run is done, and stops at once when told to.
func TestWatchShowsViewsUntilTheRunIsDoneOrItIsStopped(t *testing.T) {
	states := []string{orchestrator.RunRunning, orchestrator.RunRunning, orchestrator.RunDone, orchestrator.RunRunning}
	var shown []string
	collect := func() View { return View{Run: &Run{Status: states[len(shown)]}} }
	show := func(v View) error { shown = append(shown, v.Run.Status); return nil }
	if err := Watch(context.Background(), time.Millisecond, collect, show); err != nil || len(shown) != 3 || shown[2] != orchestrator.RunDone {
		t.Fatalf("shown %v, err %v: want two running frames, then done and no more", shown, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	frames := 0
	err := Watch(ctx, time.Hour, func() View { return View{} }, func(View) error { frames++; cancel(); return nil })
	if err != nil || frames != 1 {
		t.Fatalf("after Ctrl-C: %d frames, err %v", frames, err)
	}

	broken := errors.New("stdout closed")
	if err := Watch(context.Background(), time.Hour, func() View { return View{} }, func(View) error { return broken }); !errors.Is(err, broken) {
		t.Fatalf("a failed write: %v", err)
	}
}
