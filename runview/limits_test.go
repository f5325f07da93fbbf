package runview

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

func limitWaitEvent(at time.Time) orchestrator.Event {
	return orchestrator.Event{At: at, Kind: orchestrator.EventLimitWait, Unit: "1.1", Step: orchestrator.StepDev, Agent: "claude",
		Reason: "usage_limit", ResetsAt: "2026-01-02T17:00:00Z", Wait: "2h0m10s"}
}

func TestLiveBlockCountsDownAWait(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	r := &LiveReporter{W: &buf, Now: func() time.Time { return now }}
	r.Report(orchestrator.Event{At: now, Kind: orchestrator.EventRunStarted, Message: "run-x", Total: 1})
	r.Report(limitWaitEvent(now))
	if frame := buf.String(); !strings.Contains(frame, "waiting: claude met a limit (usage_limit)") || !strings.Contains(frame, "(in 2h0m10s)") {
		t.Fatalf("frame:\n%q", frame)
	}
	buf.Reset()
	now = now.Add(time.Hour)
	r.mu.Lock()
	r.redrawLocked()
	r.mu.Unlock()
	if frame := buf.String(); !strings.Contains(frame, "(in 1h0m10s)") {
		t.Fatalf("the countdown did not move:\n%q", frame)
	}
	buf.Reset()
	r.Report(orchestrator.Event{At: now, Kind: orchestrator.EventLimitResumed, Agent: "claude", Reason: "usage_limit"})
	if frame := buf.String(); strings.Contains(frame, "waiting: claude") || !strings.Contains(frame, "the wait for claude's limit (usage_limit) is over") {
		t.Fatalf("frame after the wait:\n%q", frame)
	}
}

func TestLimitEventsAsLinesAndJSON(t *testing.T) {
	t.Parallel()
	var js, text bytes.Buffer
	at := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
	(&JSONReporter{W: &js}).Report(limitWaitEvent(at))
	(&LineReporter{W: &text}).Report(limitWaitEvent(at))
	var got map[string]any
	if err := json.Unmarshal(js.Bytes(), &got); err != nil || got["event"] != "limit_wait" || got["resetsAt"] != "2026-01-02T17:00:00Z" ||
		got["agent"] != "claude" || got["reason"] != "usage_limit" {
		t.Fatalf("json %s (%v)", js.String(), err)
	}
	if want := "15:00:00 WAITING 1.1 dev: claude met a limit (usage_limit), it lifts at 2026-01-02T17:00:00Z; the run goes on by itself in 2h0m10s\n"; text.String() != want {
		t.Fatalf("line %q, want %q", text.String(), want)
	}
}

func TestRunsTableTellsLimitsAndAPIFaultsFromRetries(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := &orchestrator.LimitWait{Agent: "claude", Reason: "usage_limit", Until: "2026-01-02T17:00:10Z"}
	WriteRunsTable(&buf, []orchestrator.RunSummary{
		{RunID: "run-b", Outcome: orchestrator.RunWaiting, Attempts: 6, Retries: 1, Limits: 2, APIFaults: 3, Wait: w, WaitRemainingSeconds: 3610},
	})
	lines := strings.Split(buf.String(), "\n")
	row := lines[1]
	if !strings.Contains(lines[0], "RETRIES  LIMITS  API FAULTS") {
		t.Fatalf("header %q", lines[0])
	}
	if !strings.Contains(row, "waiting (claude usage_limit, until ") || !strings.Contains(row, "1h0m10s left)") {
		t.Fatalf("row %q", row)
	}
	if f := strings.Fields(row[strings.Index(row, "left)")+5:]); len(f) < 4 || f[0] != "0/0" || f[1] != "6" || f[2] != "1" || f[3] != "2" || f[4] != "3" {
		t.Fatalf("row %q: attempts 6, retries 1, limits 2, api faults 3", row)
	}
}
