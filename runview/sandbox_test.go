package runview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

// The live block and the runs table say whether the children are confined.
func TestLiveBlockAndRunsTableShowTheSandbox(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{orchestrator.SandboxOn, orchestrator.SandboxOff} {
		var buf bytes.Buffer
		now := time.Date(2026, 1, 2, 15, 0, 0, 0, time.UTC)
		r := &LiveReporter{W: &buf, Now: func() time.Time { return now }}
		r.Report(orchestrator.Event{At: now, Kind: orchestrator.EventRunStarted, Message: "run-x", Total: 1, Sandbox: mode})
		want := orchestrator.SandboxText(mode, nil)
		if !strings.Contains(buf.String(), want) {
			t.Errorf("live block without %q:\n%q", want, buf.String())
		}
		var table bytes.Buffer
		WriteRunsTable(&table, []orchestrator.RunSummary{{RunID: "run-x", Sandbox: mode}})
		lines := strings.Split(strings.TrimSpace(table.String()), "\n")
		if !strings.HasSuffix(lines[0], "SANDBOX") || !strings.HasSuffix(lines[1], mode) {
			t.Errorf("runs table:\n%s", table.String())
		}
	}
	if got := orchestrator.SandboxText(orchestrator.SandboxOff, nil); !strings.Contains(got, "unconfined") {
		t.Errorf("off reads %q", got)
	}
}
