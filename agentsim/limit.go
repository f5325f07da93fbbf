package agentsim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/filelock"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/stophook"
	"github.com/story-automator/story-automator/tmux/child"
)

// EnvLimit makes the simulated agent of a child session meet a limit, as
// Claude Code does: its StopFailure hook, the synthetic transcript line
// with the reset epoch, and the screen. Its value is space-separated
// fields, each optional:
//
//	reason=usage_limit   usage_limit (default), rate_limit, overloaded, api_error,
//	                     dropped_stream (an api_error: the connection lost mid-answer)
//	until=2026-11-27T16:30:00Z   the limit lifts then; or
//	for=60s              it lifts that long after the first child met it (default 60s)
//	after=2              the run's first 2 session agents are not limited
//	step=dev             only children of that step meet it
//	noreset              the agent names no reset time
//
// Several limits are separated by ";": a child meets the first that
// limits it, each counting its own children. The run's children share each
// limit's count and start in the sessions directory (agent-sim-limit.json,
// agent-sim-limit-2.json, …). A limited child does nothing else: it idles,
// "continuing automatically" until Escape cancels that.
const EnvLimit = "STORY_AUTOMATOR_SIM_LIMIT"

// LimitSpec is a parsed EnvLimit.
type LimitSpec struct {
	Reason  string
	Until   time.Time
	For     time.Duration
	After   int
	Step    string
	NoReset bool
}

// ParseLimit reads an EnvLimit value.
func ParseLimit(v string) (LimitSpec, error) {
	l := LimitSpec{Reason: agent.LimitUsage, For: time.Minute}
	for _, f := range strings.Fields(v) {
		k, val, _ := strings.Cut(f, "=")
		var err error
		switch k {
		case "reason":
			l.Reason = val
			if limitScreens[val] == nil {
				err = fmt.Errorf("reason %q (usage_limit, rate_limit, overloaded, api_error, dropped_stream)", val)
			}
		case "until":
			l.Until, err = time.Parse(time.RFC3339, val)
		case "for":
			l.For, err = time.ParseDuration(val)
		case "after":
			l.After, err = strconv.Atoi(val)
		case "step":
			l.Step = val
		case "noreset":
			l.NoReset = true
		default:
			err = fmt.Errorf("unknown field %q", f)
		}
		if err != nil {
			return l, fmt.Errorf("%s: %w", EnvLimit, err)
		}
	}
	return l, nil
}

// limitScreens are, per reason, the CLI's words and its hook's error.
var limitScreens = map[string]*struct{ words, hookError string }{
	agent.LimitUsage:      {"You've hit your 5-hour limit", "rate_limit"},
	agent.LimitRate:       {"API Error: Request rejected (429) · Rate limit exceeded", "rate_limit"},
	agent.LimitOverloaded: {"API Error: Repeated 529 Overloaded errors", "overloaded"},
	agent.LimitAPIError:   {"API Error: 500 Internal server error", "server_error"},
	// Claude Code's words when a stream dropped and its retries are spent.
	"dropped_stream": {"API Error: Connection to the API was lost (ECONNRESET). This is usually temporary — try again.", "server_error"},
}

// limitedNow reports whether this session agent meets one of the run's
// limits, which, and when it lifts; it counts the agent in each limit's
// share up to the one that limits it.
func limitedNow(s *Sim, now time.Time) (LimitSpec, time.Time, bool, error) {
	v := s.getenv(EnvLimit)
	if v == "" || !s.Options.SessionAgent {
		return LimitSpec{}, time.Time{}, false, nil
	}
	dir := s.getenv(sessionstate.EnvStateDir)
	if dir == "" {
		dir = os.TempDir()
	}
	for i, spec := range strings.Split(v, ";") {
		name := "agent-sim-limit.json"
		if i > 0 {
			name = fmt.Sprintf("agent-sim-limit-%d.json", i+1)
		}
		l, reset, ok, err := meetsLimit(s, spec, filepath.Join(dir, name), now)
		if ok || err != nil {
			return l, reset, ok, err
		}
	}
	return LimitSpec{}, time.Time{}, false, nil
}

// meetsLimit reports whether the agent meets the limit spec, whose share
// is kept at path, and when it lifts.
func meetsLimit(s *Sim, spec, path string, now time.Time) (LimitSpec, time.Time, bool, error) {
	l, err := ParseLimit(spec)
	if err != nil || (l.Step != "" && l.Step != s.getenv(child.EnvStep)) {
		return l, time.Time{}, false, err
	}
	share, err := countLimitShare(path, l, now)
	if err != nil {
		return l, time.Time{}, false, err
	}
	reset := l.Until
	if reset.IsZero() && !share.Start.IsZero() {
		// Whole seconds, as the CLI states a reset: lifted when it says.
		reset = share.Start.Add(l.For).Add(time.Second - 1).Truncate(time.Second)
	}
	return l, reset, !share.Start.IsZero() && now.Before(reset), nil
}

// getenv is the simulation's environment (the process's when unset).
func (s *Sim) getenv(k string) string {
	if s.Getenv == nil {
		return os.Getenv(k)
	}
	return s.Getenv(k)
}

// limitShare is what the run's children share: how many came, and when
// the first met the limit.
type limitShare struct {
	Children int       `json:"children"`
	Start    time.Time `json:"start"`
}

func countLimitShare(path string, l LimitSpec, now time.Time) (limitShare, error) {
	var sh limitShare
	release, err := filelock.Acquire(context.Background(), path+".lock", 3*time.Second)
	if err != nil {
		return sh, err
	}
	defer release()
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &sh)
	}
	sh.Children++
	if sh.Start.IsZero() && sh.Children > l.After {
		sh.Start = now
	}
	b, _ := json.Marshal(sh)
	return sh, atomicfile.Replace(path, b, 0o600)
}

// actLimited shows the limit as Claude Code does and idles; Escape
// cancels its "continuing automatically".
func actLimited(ctx context.Context, s *Sim, l LimitSpec, reset time.Time) int {
	sc := limitScreens[l.Reason]
	words := sc.words
	if l.Reason == agent.LimitUsage && !l.NoReset {
		words += " · resets " + claudeClock(reset) + " (UTC)"
	}
	writeAPIErrorLine(s, l, sc.hookError, words, reset)
	fmt.Fprintf(s.Out, "❯ %s\n  ⎿  %s\n\n", firstLine(strings.TrimSpace(s.Prompt), 60), words)
	if l.Reason == agent.LimitUsage && !l.NoReset {
		fmt.Fprintf(s.Out, "● Usage limit reached · continuing automatically at %s · esc to cancel\n", claudeClock(reset))
	}
	runLimitHook(ctx, s, sc.hookError, words)
	if f, ok := s.In.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		// Keys one at a time, as Claude Code reads them: Escape has no Enter.
		if old, err := term.MakeRaw(int(f.Fd())); err == nil {
			defer func() { _ = term.Restore(int(f.Fd()), old) }()
		}
	}
	buf := make([]byte, 1)
	for s.In != nil {
		n, err := s.In.Read(buf)
		if err != nil {
			break
		}
		if n == 1 && buf[0] == 0x1b {
			fmt.Fprint(s.Out, "● Automatic continue cancelled\r\n")
		}
	}
	Forever(ctx)
	return 1
}

// claudeClock writes a reset time as Claude Code does, in UTC: "4:07pm",
// or with its date when not today, "Nov 30, 9:04am".
func claudeClock(t time.Time) string {
	t = t.UTC()
	clock := strings.ToLower(t.Format("3:04PM"))
	if y, m, d := time.Now().UTC().Date(); t.Year() != y || t.Month() != m || t.Day() != d {
		clock = t.Format("Jan 2, ") + clock
	}
	return clock
}

// writeAPIErrorLine appends Claude Code's synthetic transcript line for a
// turn that ended in an API error, with the reset epoch unless noreset.
func writeAPIErrorLine(s *Sim, l LimitSpec, hookError, words string, reset time.Time) {
	session, dir := s.getenv(sessionstate.EnvSession), s.getenv(sessionstate.EnvStateDir)
	if session == "" || dir == "" {
		return
	}
	line := map[string]any{"type": "assistant", "isApiErrorMessage": true, "error": hookError,
		"message": map[string]any{"role": "assistant", "model": "<synthetic>", "content": []any{map[string]any{"type": "text", "text": words}}}}
	if l.Reason == agent.LimitUsage {
		line["apiError"] = "usage_limit_reached"
	}
	if !l.NoReset && (l.Reason == agent.LimitUsage || l.Reason == agent.LimitRate) {
		line["apiErrorParams"] = map[string]any{"rate_limit_info": map[string]any{"status": "rejected", "resetsAt": reset.Unix()}}
	}
	b, _ := json.Marshal(line)
	f, err := os.OpenFile(TranscriptPath(dir, session), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}

// runLimitHook runs the child's hook on Claude Code's StopFailure event.
func runLimitHook(ctx context.Context, s *Sim, hookError, words string) {
	session, dir := s.getenv(sessionstate.EnvSession), s.getenv(sessionstate.EnvStateDir)
	in, _ := json.Marshal(map[string]any{"session_id": fmt.Sprintf("agent-sim-%d", os.Getpid()),
		"hook_event_name": "StopFailure", "error": hookError, "last_assistant_message": words,
		"transcript_path": TranscriptPath(dir, session)})
	argv := stophook.Program(s.Exe)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(string(in))
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(s.Out, "agent-sim: the limit hook failed: %v\n", err)
	}
}
