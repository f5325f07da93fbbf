package limit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
)

func capture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "monitor", "testdata", "limits", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func limitsOf(t *testing.T, name string) agent.Limits {
	t.Helper()
	p, ok := agent.LookupProfile(name)
	if !ok {
		t.Fatal(name)
	}
	return p.Limits
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// Every real capture of a CLI that gave up is read with the reason and the
// reset time the CLI showed (the captures were made on 2026-11-27 in UTC).
func TestRealCapturesOfEachCLIAtALimit(t *testing.T) {
	utc := Where{At: at("2026-11-27T16:04:40Z"), Loc: time.UTC}
	cases := []struct {
		agent, file string
		onExit      bool
		w           Where
		reason      string
		resets      string // "" = unknown
	}{
		{"claude", "claude-2.1.328-usage_limit-120cols.txt", false, utc, agent.LimitUsage, "2026-11-27T16:08:00Z"},
		{"claude", "claude-2.1.328-usage_limit-continue-cancelled-120cols.txt", false, utc, agent.LimitUsage, "2026-11-27T16:10:00Z"},
		{"codex", "codex-0.169.0-usage_limit-exec.log", true, Where{At: at("2026-11-27T16:03:58Z"), Loc: time.UTC}, agent.LimitUsage, "2026-11-27T16:07:00Z"},
		// Codex writes local time: the same words in New York are New York's 4:06 PM
		// (a time shown to the minute lifts by the end of it: 4:07 PM).
		{"codex", "codex-0.169.0-usage_limit-exec.log", true, Where{At: at("2026-11-27T16:03:58Z"), Loc: mustLoad(t, "America/New_York")}, agent.LimitUsage, "2026-11-27T21:07:00Z"},
		{"codex", "codex-0.169.0-usage_limit-exec-next-day.log", true, utc, agent.LimitUsage, "2026-11-28T22:05:00Z"},
		{"codex", "codex-0.169.0-usage_limit-interactive-120cols.txt", false, Where{At: at("2026-11-27T16:07:40Z"), Loc: time.UTC}, agent.LimitUsage, "2026-11-27T16:11:00Z"},
		{"codex", "codex-0.169.0-rate_limit-exec.log", true, utc, agent.LimitRate, ""},
		{"codex", "codex-0.169.0-overloaded-exec.log", true, utc, agent.LimitOverloaded, ""},
		{"codex", "codex-0.169.0-server_error-exec.log", true, utc, agent.LimitAPIError, ""},
		{"codex", "codex-0.169.0-dropped_stream-exec.log", true, utc, agent.LimitAPIError, ""},
		{"gemini", "gemini-0.61.0-daily_quota-p.log", true, utc, agent.LimitUsage, ""},
		{"gemini", "gemini-0.61.0-retry_delay-p.log", true, Where{At: at("2026-11-27T16:05:59Z"), Loc: time.UTC}, agent.LimitUsage, "2026-11-27T17:05:59Z"},
		{"gemini", "gemini-0.61.0-overloaded-p.log", true, utc, agent.LimitOverloaded, ""},
		{"gemini", "gemini-0.61.0-dropped_stream-p.log", true, utc, agent.LimitAPIError, ""},
		{"gemini", "gemini-0.61.0-daily_quota-interactive-120cols.txt", false, utc, agent.LimitUsage, ""},
		{"gemini", "gemini-0.61.0-retry_delay-interactive-120cols.txt", false, Where{At: at("2026-11-27T16:08:30Z"), Loc: time.UTC}, agent.LimitUsage, "2026-11-27T17:09:00Z"},
	}
	for _, c := range cases {
		text := capture(t, c.file)
		read := FromScreen
		if c.onExit {
			read = FromExit
		}
		sig, ok := read(limitsOf(t, c.agent), text, c.w)
		if !ok || sig.Reason != c.reason {
			t.Errorf("%s: %+v %v, want %s", c.file, sig, ok, c.reason)
			continue
		}
		if got := rfc(sig.ResetsAt); got != c.resets {
			t.Errorf("%s: resets %q, want %q", c.file, got, c.resets)
		}
	}
}

func rfc(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Gemini CLI's own retries are no limit yet: its output before it gave up
// (the attempts only) reads as nothing, and neither does a finished turn
// or a dialog of any CLI.
func TestRetriesAndOrdinaryScreensAreNoLimit(t *testing.T) {
	over := capture(t, "gemini-0.61.0-overloaded-p.log")
	retrying := over[:strings.Index(over, "Attempt 10 failed")]
	if sig, ok := FromExit(limitsOf(t, "gemini"), retrying, Where{At: time.Now()}); ok {
		t.Errorf("Gemini's retries read as %+v", sig)
	}
	for _, dir := range []string{"claude", "dialogs"} {
		files, _ := filepath.Glob(filepath.Join("..", "monitor", "testdata", dir, "*.txt"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, a := range agent.CLIAgents() {
				if sig, ok := FromScreen(limitsOf(t, a), string(b), Where{At: time.Now()}); ok {
					t.Errorf("%s read as %s's limit %+v", f, a, sig)
				}
				if sig, ok := FromExit(limitsOf(t, a), string(b), Where{At: time.Now()}); ok {
					t.Errorf("%s read as %s's exit at a limit %+v", f, a, sig)
				}
			}
		}
	}
}

// A limit still in view while Claude Code works on a later turn is that
// earlier turn's.
func TestALimitInViewOfABusyScreenIsAnEarlierTurns(t *testing.T) {
	screen := capture(t, "claude-2.1.328-usage_limit-120cols.txt") + "\n✶ Flibbertigibbeting… (3s · esc to interrupt)\n"
	if sig, ok := FromScreen(limitsOf(t, "claude"), screen, Where{At: time.Now()}); ok {
		t.Fatalf("read as %+v", sig)
	}
}

// Claude Code's StopFailure says rate_limit for a subscriber's usage limit
// too; its transcript tells which, with the exact reset epoch.
func TestClaudeStopFailureWithItsTranscript(t *testing.T) {
	l := limitsOf(t, "claude")
	msg := "You've hit your 5-hour limit · resets 4:06pm (UTC)"
	tr := filepath.Join("..", "monitor", "testdata", "limits", "claude-2.1.328-usage_limit-transcript.jsonl")
	w := Where{At: at("2026-11-27T16:04:22Z"), Loc: time.UTC}
	sig, ok := FromHook(l, "rate_limit", msg, tr, w)
	if !ok || sig.Reason != agent.LimitUsage || rfc(sig.ResetsAt) != "2026-11-27T16:06:52Z" || sig.Source != SourceHook {
		t.Fatalf("with transcript: %+v %v", sig, ok)
	}
	// Without a transcript, the words it showed give the minute.
	if sig, ok := FromHook(l, "rate_limit", msg, "", w); !ok || sig.Reason != agent.LimitUsage || rfc(sig.ResetsAt) != "2026-11-27T16:07:00Z" {
		t.Fatalf("without transcript: %+v %v", sig, ok)
	}
	// An API key's rate limit names no reset; overload is its own reason.
	if sig, ok := FromHook(l, "rate_limit", "API Error: Request rejected (429) · Rate limit exceeded", "", w); !ok || sig.Reason != agent.LimitRate || !sig.ResetsAt.IsZero() {
		t.Fatalf("api key: %+v %v", sig, ok)
	}
	if sig, ok := FromHook(l, "overloaded", "API Error: Repeated 529 Overloaded errors", "", w); !ok || sig.Reason != agent.LimitOverloaded {
		t.Fatalf("overloaded: %+v %v", sig, ok)
	}
	// A dropped stream, once Claude Code's retries are spent, is an API error.
	var in struct{ Error, Message string }
	if err := json.Unmarshal([]byte(strings.Replace(capture(t, "claude-2.1.328-stopfailure-dropped_stream.json"), "last_assistant_message", "message", 1)), &in); err != nil {
		t.Fatal(err)
	}
	if sig, ok := FromHook(l, in.Error, in.Message, "", w); !ok || sig.Reason != agent.LimitAPIError {
		t.Fatalf("dropped stream: %+v %v", sig, ok)
	}
	// An error that no wait settles is no limit.
	if sig, ok := FromHook(l, "authentication_failed", "Invalid API key", "", w); ok {
		t.Fatalf("authentication_failed read as %+v", sig)
	}
}

// The reset times the pinned CLIs were seen to print, each in its zone.
func TestParseClockInTheZoneTheCLINamed(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	w := Where{At: at("2026-11-27T16:04:49Z"), Loc: time.UTC}
	cases := []struct {
		text string
		w    Where
		want string
	}{
		// Claude Code's weekly limit, printed in the process's zone.
		{"Nov 30, 9:04am (America/New_York)", w, "2026-11-30T14:04:00Z"},
		{"Nov 30, 3:04pm (Europe/Berlin)", w, "2026-11-30T14:04:00Z"},
		{"3:14pm (UTC)", w, "2026-11-28T15:14:00Z"}, // a time of day already past is tomorrow's
		{"12:56 PM.", Where{At: at("2026-11-27T16:00:00Z"), Loc: ny}, "2026-11-27T17:56:00Z"},
		{"12:30 AM", w, "2026-11-28T00:30:00Z"},
		{"Nov 28th, 2026 2:16 PM.", Where{At: at("2026-11-27T16:00:00Z"), Loc: ny}, "2026-11-28T19:16:00Z"},
		{"5:08 PM UTC.", Where{At: w.At, Loc: ny}, "2026-11-27T17:08:00Z"},
		{"11:08 AM EST.", Where{At: w.At, Loc: ny}, "2026-11-27T16:08:00Z"},
		{"Jan 2, 1:00am (UTC)", w, "2027-01-02T01:00:00Z"},
	}
	for _, c := range cases {
		got, ok := ParseClock(c.text, c.w)
		if !ok || rfc(got) != c.want {
			t.Errorf("%q: %s %v, want %s", c.text, rfc(got), ok, c.want)
		}
	}
	for _, bad := range []string{"soon", "25:00", "13:00 PM", "4:61pm"} {
		if got, ok := ParseClock(bad, w); ok {
			t.Errorf("%q read as %s", bad, got)
		}
	}
	if got, ok := ParseDelay("3600s.", w); !ok || !got.Equal(w.At.Add(time.Hour)) {
		t.Errorf("delay: %s %v", got, ok)
	}
}

// Codex's rollout, found by the session id its exec output names, gives
// the usage limit's reset to the second.
func TestCodexRolloutGivesTheExactReset(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "27")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(dir, "rollout-2026-11-27T16-03-58-01a21dbf-cadc-7100-9bc0-20d1a0c3b3ff.jsonl")
	if err := os.WriteFile(rollout, []byte(capture(t, "codex-0.169.0-usage_limit-rollout.jsonl")), 0o600); err != nil {
		t.Fatal(err)
	}
	out := capture(t, "codex-0.169.0-usage_limit-exec.log")
	if reset, ok := FromRollout(home, out); !ok || rfc(reset) != "2026-11-27T16:06:28Z" {
		t.Fatalf("reset %s %v", rfc(reset), ok)
	}
	if _, ok := FromRollout(home, capture(t, "codex-0.169.0-rate_limit-exec.log")); ok {
		t.Fatal("another session's rollout was read")
	}
}

// OpenCode 1.18.33's database after a usage limit (testdata/opencode,
// written by the pinned CLI against model-sim's `usage` limit of 1h): the
// failed message keeps the API's reset header, read to the second; a
// database with no such message since the child started has none.
func TestFromOpenCodeDBReadsTheResetOfAUsageLimit(t *testing.T) {
	home := filepath.Join("testdata", "opencode")
	reset, ok := FromOpenCodeDB(home, time.UnixMilli(1795919278870))
	if !ok || !reset.Equal(time.Unix(1795922895, 0)) {
		t.Fatalf("reset %s %v, want %s", reset, ok, time.Unix(1795922895, 0).UTC())
	}
	if _, ok := FromOpenCodeDB(home, time.UnixMilli(1795919278870).Add(time.Hour)); ok {
		t.Fatal("a limit from before the child started was read")
	}
	if _, ok := FromOpenCodeDB(t.TempDir(), time.Time{}); ok {
		t.Fatal("a reset read from no database")
	}
}
