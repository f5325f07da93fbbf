package dashboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

// BenchmarkFrame200Stories renders one frame of a 200-story run (the run
// view at 120×40, colours on, a story deep in the list selected): what each
// change of the run and each clock tick costs. Reported as the median of
// many frames; the target is 10 ms, not asserted.
func BenchmarkFrame200Stories(b *testing.B) {
	m := New(fixedSource(), Controls{}, true).WithSnapshot(snapshotOf(fixtureState(200)), 120, 40)
	m.selected = 150
	const frames = 200
	for b.Loop() {
		times := make([]time.Duration, frames)
		for i := range times {
			start := time.Now()
			_ = m.Render()
			times[i] = time.Since(start)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		b.ReportMetric(float64(times[frames/2].Microseconds())/1000, "frame-median-ms")
		b.ReportMetric(float64(times[frames*99/100].Microseconds())/1000, "frame-p99-ms")
	}
}

// BenchmarkLoad200Stories reads a 200-story run's snapshot from disk (its
// state document, the runs, the hook's history, the live sessions on a tmux
// server with none): what each change the dashboard wakes on costs.
func BenchmarkLoad200Stories(b *testing.B) {
	root := b.TempDir()
	st := fixtureState(200)
	st.ProjectRoot = root
	st.Config.TmuxSocket = fmt.Sprintf("sa-bench-none-%d", os.Getpid())
	st.Config.StateFile = filepath.Join(orchestrator.RunsDir(root), st.RunID+".md")
	if err := os.MkdirAll(orchestrator.RunsDir(root), 0o700); err != nil {
		b.Fatal(err)
	}
	if err := orchestrator.SaveState(st.Config.StateFile, st); err != nil {
		b.Fatal(err)
	}
	src := Source{Root: root, Getenv: func(string) string { return "" }, Now: time.Now}
	const loads = 20
	for b.Loop() {
		times := make([]time.Duration, loads)
		for i := range times {
			start := time.Now()
			snap := src.Load(context.Background())
			times[i] = time.Since(start)
			if snap.State == nil || len(snap.State.Units) != 200 {
				b.Fatal("the run did not load")
			}
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		b.ReportMetric(float64(times[loads/2].Microseconds())/1000, "load-median-ms")
	}
}
