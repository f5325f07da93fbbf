package monitor

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

// The monitor's reasons are the limit signs' own.
func TestLimitReasonsAreTheProfilesOwn(t *testing.T) {
	if ReasonUsageLimit != agent.LimitUsage || ReasonRateLimit != agent.LimitRate ||
		ReasonOverloaded != agent.LimitOverloaded || ReasonAPIError != agent.LimitAPIError {
		t.Fatal("monitor and agent name the limit reasons differently")
	}
}

// A Codex or Gemini child that exited 1 at a limit (real output of the
// pinned CLIs) ends limited with its reason and reset time, not crashed;
// the JSON carries resetsAt and agent, and the exit code is 9.
func TestAChildThatExitedAtALimitIsLimitedNotCrashed(t *testing.T) {
	exited := time.Now().UTC().Truncate(time.Second)
	cases := []struct {
		agent, file, reason string
		reset               bool
	}{
		{agent.AgentCodex, "codex-0.169.0-usage_limit-exec-next-day.log", ReasonUsageLimit, true},
		{agent.AgentCodex, "codex-0.169.0-rate_limit-exec.log", ReasonRateLimit, false},
		{agent.AgentCodex, "codex-0.169.0-overloaded-exec.log", ReasonOverloaded, false},
		{agent.AgentGemini, "gemini-0.61.0-retry_delay-p.log", ReasonUsageLimit, true},
		{agent.AgentGemini, "gemini-0.61.0-daily_quota-p.log", ReasonUsageLimit, false},
		{agent.AgentGemini, "gemini-0.61.0-overloaded-p.log", ReasonOverloaded, false},
		{agent.AgentGemini, "gemini-0.61.0-dropped_stream-p.log", ReasonAPIError, false},
		{agent.AgentCodex, "codex-0.169.0-dropped_stream-exec.log", ReasonAPIError, false},
		{agent.AgentCopilot, "copilot-1.0.102-usage_limit-p.log", ReasonUsageLimit, false},
		{agent.AgentCopilot, "copilot-1.0.102-rate_limit-p.log", ReasonRateLimit, false},
		{agent.AgentCopilot, "copilot-1.0.102-overloaded-p.log", ReasonOverloaded, false},
		{agent.AgentCopilot, "copilot-1.0.102-server_error-p.log", ReasonAPIError, false},
		{agent.AgentOpenCode, "opencode-1.18.33-usage_limit-run.log", ReasonUsageLimit, false},
		{agent.AgentOpenCode, "opencode-1.18.33-overloaded-run.log", ReasonOverloaded, false},
		{agent.AgentOpenCode, "opencode-1.18.33-server_error-run.log", ReasonAPIError, false},
	}
	for _, c := range cases {
		out := readFixture(t, "testdata/limits/"+c.file)
		d := fakeDeps(t, &fakeTmux{}, true)
		writeSession(t, d, "sa-l", func(st *sessionstate.State) {
			code := 1
			st.Agent, st.Lifecycle, st.ExitCode, st.ExitedAt = c.agent, sessionstate.LifecycleExited, &code, marker.Timestamp(exited)
		}, out)
		r := Watch(context.Background(), "sa-l", noneVerifier{}, quickOptions(), d)
		if r.FinalState != Limited || r.Reason != c.reason || r.Agent != c.agent || r.FinalState.ExitCode() != 9 {
			t.Errorf("%s: %+v", c.file, r)
			continue
		}
		if (r.ResetsAt != "") != c.reset {
			t.Errorf("%s: resetsAt %q", c.file, r.ResetsAt)
		}
		if c.file == "gemini-0.61.0-retry_delay-p.log" && r.ResetsAt != exited.Add(time.Hour).Format(time.RFC3339) {
			t.Errorf("a retry delay counts from the exit at %s: resetsAt %s", exited, r.ResetsAt)
		}
		b, _ := json.Marshal(r)
		if !strings.Contains(string(b), `"finalState":"limited"`) || (c.reset && !strings.Contains(string(b), `"resetsAt":"`)) {
			t.Errorf("%s: JSON %s", c.file, b)
		}
	}
}

// A live Claude child whose StopFailure hook recorded a usage limit ends
// limited at once with the transcript's exact reset, and its "continuing
// automatically" is cancelled so it never runs the turn again by itself.
func TestAClaudeChildsLimitHookEndsItLimitedAndCancelsItsAutoContinue(t *testing.T) {
	screen := readFixture(t, "testdata/limits/claude-2.1.328-usage_limit-120cols.txt")
	cancelled := readFixture(t, "testdata/limits/claude-2.1.328-usage_limit-continue-cancelled-120cols.txt")
	presses := 0
	// The first press is lost (it came while the hook still ran); the
	// second takes, as the real screen then shows.
	tm := &fakeTmux{exists: true, screen: screen, onKey: func(f *fakeTmux, key string) {
		if presses++; presses == 2 {
			f.screen = cancelled
		}
	}}
	d := fakeDeps(t, tm, false)
	hook := readFixture(t, "testdata/limits/claude-2.1.328-stopfailure-usage_limit.json")
	var in struct {
		Error   string `json:"error"`
		Message string `json:"last_assistant_message"`
	}
	if err := json.Unmarshal([]byte(hook), &in); err != nil {
		t.Fatal(err)
	}
	writeSession(t, d, "sa-c", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = agent.AgentClaude, sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
	}, "output")
	if _, err := sessionstate.StampLimit(d.StateDir, "sa-c", time.Now(), "StopFailure", in.Error, in.Message,
		"testdata/limits/claude-2.1.328-usage_limit-transcript.jsonl"); err != nil {
		t.Fatal(err)
	}
	r := Watch(context.Background(), "sa-c", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Limited || r.Reason != ReasonUsageLimit || r.ResetsAt != "2026-11-27T16:06:52Z" || r.Agent != agent.AgentClaude {
		t.Fatalf("%+v", r)
	}
	if strings.Join(tm.keys, " ") != "Escape Escape" {
		t.Fatalf("keys sent %q, want the one that cancels the automatic continue", tm.keys)
	}
}

// A limit the hook recorded before the last `session send` belongs to an
// earlier turn: the new turn is watched as usual.
func TestALimitBeforeTheLastSendIsNotThisTurns(t *testing.T) {
	d := fakeDeps(t, &fakeTmux{exists: true}, false)
	then := time.Now().Add(-time.Minute)
	writeSession(t, d, "sa-c", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = agent.AgentClaude, sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
		st.Limit = &sessionstate.LimitStamp{At: marker.Timestamp(then), Event: "StopFailure", Error: "rate_limit"}
		st.SendBaseline = &sessionstate.SendBaseline{At: marker.Timestamp(then.Add(time.Second))}
	}, "")
	o := quickOptions()
	o.Timeout = 300 * time.Millisecond
	if r := Watch(context.Background(), "sa-c", noneVerifier{}, o, d); r.FinalState != TimedOut {
		t.Fatalf("%+v", r)
	}
}

// A limit on a live screen (Gemini's interactive box) ends the wait too.
func TestALimitOnALiveScreenEndsTheWaitLimited(t *testing.T) {
	screen := readFixture(t, "testdata/limits/gemini-0.61.0-retry_delay-interactive-120cols.txt")
	tm := &fakeTmux{exists: true, screen: screen}
	d := fakeDeps(t, tm, false)
	writeSession(t, d, "sa-g", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = agent.AgentGemini, sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
	}, "output")
	r := Watch(context.Background(), "sa-g", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Limited || r.Reason != ReasonUsageLimit || !strings.HasSuffix(r.ResetsAt, ":09:00Z") || len(tm.keys) != 0 {
		t.Fatalf("%+v keys %q", r, tm.keys)
	}
}

// A transcript that never gets the limit's line leaves the reset the
// CLI's words named, once the wait for it is over.
func TestALimitWhoseRecordNeverCameKeepsTheWordsReset(t *testing.T) {
	d := fakeDeps(t, &fakeTmux{exists: true}, false)
	tr := t.TempDir() + "/transcript.jsonl"
	if err := os.WriteFile(tr, []byte(`{"type":"user"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stamped := time.Date(2026, 11, 27, 16, 4, 22, 0, time.UTC)
	writeSession(t, d, "sa-c", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = agent.AgentClaude, sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
		st.Transcript = tr
		st.Limit = &sessionstate.LimitStamp{At: marker.Timestamp(stamped), Event: "StopFailure", Error: "rate_limit",
			Message: "You've hit your 5-hour limit · resets 4:06pm (UTC)"}
	}, "")
	r := Watch(context.Background(), "sa-c", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Limited || r.Reason != ReasonUsageLimit || r.ResetsAt != "2026-11-27T16:07:00Z" {
		t.Fatalf("%+v", r)
	}
}
