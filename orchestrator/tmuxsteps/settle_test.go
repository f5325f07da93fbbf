package tmuxsteps

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/sessionstate"
)

func TestSettleWaitsForTheRecordToStopGrowing(t *testing.T) {
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	wait := func() bool { clock = clock.Add(50 * time.Millisecond); return true }
	cases := []struct {
		name  string
		sizes []int64 // what each look reads; then the last, for ever
		want  time.Duration
	}{
		{"quiet from the start", []int64{100}, 300 * time.Millisecond},
		{"grows twice, then quiet", []int64{100, 100, 150, 150, 200}, 200*time.Millisecond + 300*time.Millisecond},
		{"never quiet: capped", nil, 3 * time.Second},
	}
	for _, c := range cases {
		clock = time.Unix(0, 0)
		looks := 0
		size := func() (int64, bool) {
			defer func() { looks++ }()
			if c.sizes == nil {
				return int64(looks), true // grows at every look
			}
			return c.sizes[min(looks, len(c.sizes)-1)], true
		}
		settle(size, now, wait, 300*time.Millisecond, 3*time.Second)
		if got := clock.Sub(time.Unix(0, 0)); got != c.want {
			t.Errorf("%s: settled after %v, want %v", c.name, got, c.want)
		}
	}
	// A record that cannot be read, and a wait that ends, return at once.
	clock = time.Unix(0, 0)
	settle(func() (int64, bool) { return 0, false }, now, wait, time.Second, time.Minute)
	settle(func() (int64, bool) { return 1, true }, now, func() bool { return false }, time.Second, time.Minute)
	if clock != time.Unix(0, 0) {
		t.Errorf("waited %v for an unreadable record or an ended wait", clock.Sub(time.Unix(0, 0)))
	}
}

func TestWaitGoneEndsWhenTheLastProcessExits(t *testing.T) {
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	a, b := start(), start()
	pids := []int{a.Process.Pid, b.Process.Pid}
	if waitGone(context.Background(), pids, 50*time.Millisecond) {
		t.Fatal("two running processes reported gone")
	}
	_ = a.Process.Kill()
	if waitGone(context.Background(), pids, 50*time.Millisecond) {
		t.Fatal("reported gone while one still runs")
	}
	_ = b.Process.Kill()
	if !waitGone(context.Background(), pids, time.Minute) {
		t.Fatal("both killed, not reported gone")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if waitGone(ctx, []int{start().Process.Pid}, time.Minute) {
		t.Fatal("an ended ctx reported a running process gone")
	}
}

// An agent whose profile names the line its record ends with (Copilot CLI
// flushes its event log, usage and all, as it shuts down) is closed only
// once that line is there, however long the record stood still before.
func TestSettleRecordWaitsForTheRecordsEnd(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "events.jsonl")
	if err := os.WriteFile(record, []byte(`{"type":"session.start"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state, _ := json.Marshal(sessionstate.State{Name: "sa-x", Agent: agent.AgentCopilot, Lifecycle: sessionstate.LifecycleStarted, Transcript: record})
	if err := os.WriteFile(sessionstate.StatePath(dir, "sa-x"), state, 0o600); err != nil {
		t.Fatal(err)
	}
	r := &Runner{StateDir: dir}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		// Well past recordQuiet: a record that merely stopped growing is not whole.
		time.Sleep(4 * recordQuiet)
		f, err := os.OpenFile(record, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, _ = f.WriteString(`{"type":"session.usage_record"}` + "\n" + `{"type":"session.shutdown"}` + "\n")
			_ = f.Close()
		}
	}()
	r.settleRecord(context.Background(), "sa-x")
	if data, _ := os.ReadFile(record); !strings.Contains(string(data), "session.shutdown") {
		t.Fatal("the session was let go before its record ended")
	}
	<-wrote
	if p, _ := agent.LookupProfile(agent.AgentCopilot); p.RecordEnd == "" || !recordEnds(record, p.RecordEnd) {
		t.Fatalf("the record's end is not recognised: %q", p.RecordEnd)
	}
}
