package runview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

func TestLiveReporterRedrawsDoneOfTotalRunningStepsAndElapsed(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	r := &LiveReporter{W: &buf, Now: func() time.Time { return now }}
	r.Report(orchestrator.Event{At: now, Kind: orchestrator.EventRunStarted, Message: "run-x", Total: 4})
	now = now.Add(90 * time.Second)
	r.Report(orchestrator.Event{At: now, Kind: orchestrator.EventStepStarted, Unit: "1.2", Step: orchestrator.StepDev, Attempt: 2, Agent: "codex", Role: orchestrator.RoleFallback})
	frame := buf.String()
	if !strings.Contains(frame, "0/4 stories done") || !strings.Contains(frame, "1.2") ||
		!strings.Contains(frame, "attempt 2 · codex (fallback)") || !strings.Contains(frame, "elapsed 1m30s") {
		t.Fatalf("frame:\n%q", frame)
	}
	buf.Reset()
	r.Report(orchestrator.Event{At: now, Kind: orchestrator.EventUnitDone, Unit: "1.2", Done: 1, Total: 4})
	second := buf.String()
	// Two lines: the header and the spend line, then the running story.
	if !strings.HasPrefix(second, "\x1b[3A") || !strings.Contains(second, "1/4 stories done") || strings.Contains(second, "attempt 2") {
		t.Fatalf("the second frame must replace the first (3 lines up) and drop the finished story:\n%q", second)
	}
}

func TestJSONAndLineReportersPrintOneLinePerEvent(t *testing.T) {
	t.Parallel()
	var js, text bytes.Buffer
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	ev := orchestrator.Event{At: at, Kind: orchestrator.EventStepFinished, Unit: "1.1", Step: orchestrator.StepReview, Attempt: 3, Cycle: 2, Agent: "sim",
		FinalState: orchestrator.FinalIncomplete, Reason: "not_verified"}
	(&JSONReporter{W: &js}).Report(ev)
	(&LineReporter{W: &text}).Report(ev)
	var got map[string]any
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || got["event"] != orchestrator.EventStepFinished || got["at"] != "2026-01-02T15:04:05Z" || got["cycle"] != 2.0 {
		t.Fatalf("json line %s (%v)", js.String(), err)
	}
	if want := "15:04:05 1.1 review attempt 3 (review cycle 2): incomplete (not_verified)\n"; text.String() != want {
		t.Fatalf("text line %q, want %q", text.String(), want)
	}
}

func TestLiveBlockShowsTheRunsSpendAgainstItsBudget(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	r := &LiveReporter{W: &buf, Now: func() time.Time { return now }}
	r.Report(orchestrator.Event{At: now, Kind: orchestrator.EventRunStarted, Message: "run-x", Total: 2, Budget: &orchestrator.Budget{MaxCostUSD: 0.05}})
	cost := 0.0291
	tot := spend.Total{Usage: spend.Usage{InputTokens: 4000, OutputTokens: 800, CacheReadTokens: 12000, CacheWriteTokens: 400, CostUSD: &cost}, Attempts: 4}
	r.Report(orchestrator.Event{At: now, Kind: orchestrator.EventStepFinished, Unit: "1.1", Step: orchestrator.StepReview, Attempt: 1, FinalState: orchestrator.FinalIncomplete, Usage: &tot})
	if frame := buf.String(); !strings.Contains(frame, "spent $0.03 · 17.2k tokens of limit $0.05") {
		t.Fatalf("frame:\n%q", frame)
	}
}
