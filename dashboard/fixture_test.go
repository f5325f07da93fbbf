package dashboard

import (
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
	"github.com/story-automator/story-automator/status"
	"github.com/story-automator/story-automator/stophook"
	"github.com/story-automator/story-automator/workflows"
)

// fixedNow is the fixtures' clock: ten minutes into their run.
var fixedNow = time.Date(2026, 11, 22, 12, 10, 0, 0, time.UTC)

var storyTitles = []string{"Greet the world", "Greet by name", "Shout mode", "Farewell"}

func dollars(v float64) *float64 { return &v }

// fixtureState is a running run of n stories: the first done, the second in
// dev after a failed attempt, the rest pending.
func fixtureState(n int) *orchestrator.State {
	st := &orchestrator.State{Version: orchestrator.StateVersion, RunID: "run-20261122-120000-abcd", Status: orchestrator.RunRunning,
		StartedAt: "2026-11-22T12:00:00Z", UpdatedAt: "2026-11-22T12:09:30Z",
		Config: orchestrator.RunConfig{Agent: "sim", TmuxSocket: "story-demo", Budget: &orchestrator.Budget{MaxCostUSD: 5}}}
	for i := range n {
		u := &orchestrator.Unit{Key: fmt.Sprintf("1-%d", i+1), Kind: orchestrator.KindStory, Epic: "1", Dotted: fmt.Sprintf("1.%d", i+1),
			Title: storyTitles[i%len(storyTitles)], Status: orchestrator.StatusPending}
		for _, name := range []string{"create", "dev", "automate", "review", "commit"} {
			u.Steps = append(u.Steps, &orchestrator.StepState{Name: name, Status: orchestrator.StatusPending})
		}
		st.Units = append(st.Units, u)
	}
	done := st.Units[0]
	done.Status, done.Commit = orchestrator.StatusDone, "0123456789abcdef0123"
	for i, s := range done.Steps {
		s.Status = orchestrator.StatusVerified
		s.Attempts = []orchestrator.Attempt{attempt(1, "completed", "", int64(40000+i*1000))}
	}
	done.Steps[2].Status = orchestrator.StatusSkipped
	if n > 1 {
		cur := st.Units[1]
		cur.Status = orchestrator.StatusRunning
		cur.Steps[0].Status, cur.Steps[0].Attempts = orchestrator.StatusVerified, []orchestrator.Attempt{attempt(1, "completed", "", 35000)}
		cur.Steps[1].Status = orchestrator.StatusRunning
		cur.Steps[1].Attempts = []orchestrator.Attempt{attempt(1, "crashed", "exit_code_1", 12000), {N: 2, Agent: "sim", Role: "dev", Session: "sa-demo-1-2-dev-2", StartedAt: "2026-11-22T12:08:00Z"}}
	}
	return st
}

func attempt(n int, final, reason string, ms int64) orchestrator.Attempt {
	verifier := "passed"
	if final != "completed" {
		verifier = "failed"
	}
	return orchestrator.Attempt{N: n, Agent: "sim", Role: "agent", FinalState: final, Reason: reason, Verifier: verifier,
		Detail: "story file exists", WallMs: ms, Model: "sim-1",
		Usage: &spend.Usage{InputTokens: 1200, OutputTokens: 340, CostUSD: dollars(0.0123)}}
}

// snapshotOf is what the dashboard reads for st: the status view, the run
// listed, the live session of its running step.
func snapshotOf(st *orchestrator.State) Snapshot { return seenSnapshotOf(st, true) }

// seenSnapshotOf is snapshotOf as a reader sees st when its orchestrator
// holds the run lock (alive) or does not.
func seenSnapshotOf(st *orchestrator.State, alive bool) Snapshot {
	path := "/p/.story-automator/runs/" + st.RunID + ".md"
	run := status.RunOf(st, path)
	run.Status = st.SeenStatus(alive)
	if run.Status == orchestrator.RunPaused || run.Status == orchestrator.RunInterrupted {
		run.Resume = orchestrator.ResumeCommand
	}
	snap := Snapshot{State: st, Socket: st.Config.TmuxSocket, Waiting: waitingOf(run, st, nil),
		Status: status.View{Run: run, Sessions: []status.Session{}},
		Runs:   []orchestrator.RunSummary{orchestrator.SummarizeSeen(st, path, alive)}}
	for _, u := range st.Units {
		for _, s := range u.Steps {
			if s.Status == orchestrator.StatusRunning {
				snap.Status.Sessions = append(snap.Status.Sessions, status.Session{Session: "sa-demo-" + u.Key + "-" + s.Name, Story: u.Key, Step: s.Name, Agent: "sim", Lifecycle: "running"})
			}
		}
	}
	return snap
}

// loopSnapshot is a project running a prompt loop, with the hook's history.
func loopSnapshot() Snapshot {
	m := &marker.Marker{Version: 1, Mode: marker.ModeLoop, Status: marker.StatusActive,
		Loop:         &marker.LoopState{Prompt: "Make the test suite pass.\nThen stop.", Iteration: 3, MaxIterations: 10, ExitStrategy: "promise"},
		LastDecision: &marker.LastDecision{Decision: "block", Reason: "iteration 3 of 10: the promise is not met yet"}}
	snap := Snapshot{Status: status.View{Marker: status.MarkerInfo{Exists: true, Marker: m}, LastDecision: m.LastDecision}}
	for i := 1; i <= 3; i++ {
		snap.Hook = append(snap.Hook, stophook.HistoryEntry{TS: fmt.Sprintf("2026-11-22T12:0%d:00Z", i), Mode: "loop", Decision: "block",
			Iteration: i, Reason: "iteration " + fmt.Sprint(i) + " of 10: " + strings.Repeat("keep going ", 3)})
	}
	return snap
}

func fixedSource() Source {
	return Source{Root: "/p", Getenv: func(string) string { return "" }, Now: func() time.Time { return fixedNow }}
}

// deferredSnapshot is a run with three open deferred items in its project's
// deferred-work.md, one of them without a location or a severity.
func deferredSnapshot() Snapshot {
	snap := snapshotOf(fixtureState(4))
	snap.DeferredPath = "/p/_bmad-output/implementation-artifacts/deferred-work.md"
	snap.Deferred = []workflows.DeferredEntry{
		{ID: "dw-1a2b3c4d", SourceSpec: "_bmad-output/implementation-artifacts/spec-1-1-greet-the-world.md", Summary: "Greeting ignores the locale",
			Location: "src/greet.py:12", Severity: "high", Line: 1},
		{ID: "dw-5e6f7a8b", SourceSpec: "_bmad-output/implementation-artifacts/spec-1-2-greet-by-name.md", Summary: "Names with spaces\nare cut at the first one",
			Location: "src/name.py:3", Severity: "medium (unverified)", Line: 6},
		{ID: "dw-9c0d1e2f", SourceSpec: "code review of spec-1-2-greet-by-name.md (2026-11-22)", Summary: "Logging is noisy", Line: 12},
	}
	return snap
}
