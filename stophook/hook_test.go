package stophook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/story-automator/story-automator/internal/approval"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

type shellFixture struct {
	root  string
	env   mapEnv
	store *marker.Store
}

func newFixture(t *testing.T, m *marker.Marker) *shellFixture {
	t.Helper()
	f := &shellFixture{root: t.TempDir(), env: mapEnv{"XDG_STATE_HOME": t.TempDir()}}
	f.store = marker.NewStore(f.root, f.env.get)
	if m != nil {
		if _, err := f.store.Create(context.Background(), m, true); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// approve records command as approved by the user, as `loop start` does.
func (f *shellFixture) approve(t *testing.T, command string) {
	t.Helper()
	st, err := approval.Open(f.env.get)
	if err == nil {
		err = st.Approve(command)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (f *shellFixture) run(t *testing.T, input string) string {
	t.Helper()
	var out bytes.Buffer
	sh := &Shell{In: strings.NewReader(input), Out: &out, Getenv: f.env.get, Now: func() time.Time { return t0 },
		ProjectRoot: f.root, Log: Log{}, LockTimeout: 200 * time.Millisecond}
	sh.Run(context.Background())
	return out.String()
}

func (f *shellFixture) markerBytes(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(f.store.Path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func historyLines(t *testing.T, f *shellFixture) []HistoryEntry {
	t.Helper()
	data, err := os.ReadFile(f.store.HistoryPath())
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []HistoryEntry
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e HistoryEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("history line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func TestShellOwnerBlockPersistsThenPrints(t *testing.T) {
	f := newFixture(t, active())
	out := f.run(t, `{"session_id":"owner","stop_hook_active":true}`)
	var o Output
	if err := json.Unmarshal([]byte(out), &o); err != nil || o.Decision != "block" {
		t.Fatalf("output %q: %v", out, err)
	}
	m, err := f.store.Read()
	if err != nil {
		t.Fatal(err)
	}
	if m.StopHookBlocks != 2 || m.LastDecision == nil || m.LastDecision.Decision != KindBlock {
		t.Fatalf("marker after block: %+v", m)
	}
	h := historyLines(t, f)
	if len(h) != 1 || h[0].Decision != KindBlock || h[0].Session != "owner" || h[0].Blocks != 2 || h[0].Mode != "story" {
		t.Fatalf("history %+v", h)
	}
}

func TestShellBystanderWritesNothing(t *testing.T) {
	f := newFixture(t, active())
	before := f.markerBytes(t)
	if out := f.run(t, `{"session_id":"intruder","stop_hook_active":true}`); out != "" {
		t.Fatalf("bystander got output %q", out)
	}
	if !bytes.Equal(before, f.markerBytes(t)) {
		t.Fatal("bystander changed the marker")
	}
	if h := historyLines(t, f); h != nil {
		t.Fatalf("bystander wrote history %+v", h)
	}
}

func TestShellUnknownFieldsSurviveTheHook(t *testing.T) {
	f := newFixture(t, nil)
	if err := os.MkdirAll(f.store.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	legacy := `{"storiesRemaining":2,"epic":"3","heartbeat":"2026-11-22T11:59:00Z","customTool":{"x":[1,2]}}`
	if err := os.WriteFile(f.store.Path, []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := f.run(t, `{"session_id":"s","stop_hook_active":false}`); !strings.Contains(out, `"block"`) {
		t.Fatalf("legacy unowned marker should block, got %q", out)
	}
	var raw map[string]any
	if err := json.Unmarshal(f.markerBytes(t), &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw["customTool"]; !ok {
		t.Fatalf("unknown field dropped: %v", raw)
	}
}

func TestShellFailsOpenWhenLockHeldPastTheBound(t *testing.T) {
	f := newFixture(t, active())
	other := flock.New(f.store.LockPath())
	if ok, err := other.TryLock(); !ok || err != nil {
		t.Fatalf("take lock: %v %v", ok, err)
	}
	defer func() {
		if err := other.Unlock(); err != nil {
			t.Error(err)
		}
	}()
	before := f.markerBytes(t)
	if out := f.run(t, `{"session_id":"owner","stop_hook_active":true}`); out != "" {
		t.Fatalf("hook must allow when it cannot persist, printed %q", out)
	}
	if !bytes.Equal(before, f.markerBytes(t)) {
		t.Fatal("marker changed without the lock")
	}
	h := historyLines(t, f)
	if len(h) != 1 || h[0].Decision != KindFailOpen {
		t.Fatalf("history %+v", h)
	}
}

func TestShellFailsOpenWhenMarkerDirReadOnly(t *testing.T) {
	f := newFixture(t, active())
	dir := f.store.Dir()
	makeReadOnly(t, dir)
	if out := f.run(t, `{"session_id":"owner","stop_hook_active":true}`); out != "" {
		t.Fatalf("hook must allow when it cannot persist, printed %q", out)
	}
}

// makeReadOnly makes dir unwritable even for root (chattr +i) or skips.
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Chmod(dir, 0o700); err != nil {
			t.Error(err)
		}
	})
	if writable(dir) {
		if err := exec.Command("chattr", "+i", dir).Run(); err == nil {
			t.Cleanup(func() {
				if err := exec.Command("chattr", "-i", dir).Run(); err != nil {
					t.Errorf("chattr -i %s: %v", dir, err)
				}
			})
		}
	}
	if writable(dir) {
		t.Skip("cannot make a directory read-only here (root without chattr)")
	}
}

func writable(dir string) bool {
	f, err := os.CreateTemp(dir, "probe")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

func TestShellChildStampsItsSessionState(t *testing.T) {
	f := newFixture(t, active())
	stateDir := filepath.Join(f.root, "state")
	f.env[EnvChild] = "true"
	f.env[EnvSession] = "sa-proj-ab12-e1-s1-2-dev-x9z8"
	f.env[sessionstate.EnvStateDir] = stateDir
	before := f.markerBytes(t)
	msg := strings.Repeat("é", 5000) + " all done"
	in, _ := json.Marshal(map[string]any{"session_id": "owner", "last_assistant_message": msg,
		"transcript_path": "/home/u/.claude/projects/p/s.jsonl"})
	if out := f.run(t, string(in)); out != "" {
		t.Fatalf("child got output %q", out)
	}
	st, err := sessionstate.Read(stateDir, "sa-proj-ab12-e1-s1-2-dev-x9z8")
	if err == nil && st.Transcript != "/home/u/.claude/projects/p/s.jsonl" {
		t.Errorf("transcript %q not recorded: the run reads the child's usage from it", st.Transcript)
	}
	if err != nil {
		t.Fatal(err)
	}
	if st.Completion == nil || st.Completion.Turns != 1 || st.Completion.At != marker.Timestamp(t0) {
		t.Fatalf("completion %+v", st.Completion)
	}
	if len(st.Completion.Excerpt) > sessionstate.MaxExcerptBytes || !strings.HasSuffix(st.Completion.Excerpt, "all done") {
		t.Fatalf("excerpt not a bounded tail: %d bytes", len(st.Completion.Excerpt))
	}
	if !bytes.Equal(before, f.markerBytes(t)) {
		t.Fatal("a child changed the run marker")
	}
	fi, _ := os.Stat(stateDir)
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode %v", fi.Mode().Perm())
	}
}

func TestShellChildWithHostileSessionNameWritesNothing(t *testing.T) {
	f := newFixture(t, nil)
	f.env[EnvChild] = "true"
	f.env[EnvSession] = "../../etc/evil"
	f.env[sessionstate.EnvStateDir] = filepath.Join(f.root, "state")
	f.run(t, `{}`)
	if _, err := os.Stat(filepath.Join(f.root, "state")); !os.IsNotExist(err) {
		t.Fatal("hostile session name created state")
	}
}

func TestShellMalformedInputAllows(t *testing.T) {
	f := newFixture(t, active(func(m *marker.Marker) { m.OwnerSession = "" }))
	for _, in := range []string{"", "  \n", `{"session_id":`, "\xff\xfe", `[1,2]`, `"str"`} {
		if out := f.run(t, in); out != "" {
			t.Fatalf("input %q printed %q", in, out)
		}
	}
}

func TestShellChildSubagentStopDoesNotStamp(t *testing.T) {
	f := newFixture(t, nil)
	stateDir := filepath.Join(f.root, "state")
	f.env[EnvChild] = "true"
	f.env[EnvSession] = "sa-proj-ab12-e1-s1-2-dev-x9z8"
	f.env[sessionstate.EnvStateDir] = stateDir
	f.run(t, `{"session_id":"c","hook_event_name":"SubagentStop","last_assistant_message":"sub done"}`)
	if _, err := sessionstate.Read(stateDir, "sa-proj-ab12-e1-s1-2-dev-x9z8"); err == nil {
		t.Fatal("a subagent's stop was recorded as the child's turn completion")
	}
}

func TestShellHonoursLockTimeoutFromEnvironment(t *testing.T) {
	f := newFixture(t, active())
	other := flock.New(f.store.LockPath())
	if ok, _ := other.TryLock(); !ok {
		t.Fatal("take lock")
	}
	unlocked := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		unlocked <- other.Unlock()
	}()
	// The shell's own bound is unset, so the environment's 5s applies and the
	// hook outlasts the 300ms hold instead of failing open at once.
	f.env[marker.EnvLockTimeout] = "5s"
	var out bytes.Buffer
	sh := &Shell{In: strings.NewReader(`{"session_id":"owner","stop_hook_active":true}`), Out: &out, Getenv: f.env.get,
		Now: func() time.Time { return t0 }, ProjectRoot: f.root, Log: Log{}}
	sh.Run(context.Background())
	if err := <-unlocked; err != nil {
		t.Fatalf("release the other holder's lock: %v", err)
	}
	if !strings.Contains(out.String(), `"block"`) {
		t.Fatalf("hook did not wait for the lock as configured: %q", out.String())
	}
}

func TestHistoryRollsOverAndRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, marker.HistoryFile)
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), MaxHistoryBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	// Appending alone (the unlocked fail-open path) never rolls over.
	if err := AppendHistory(p, HistoryEntry{Decision: KindFailOpen}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p + ".1"); !os.IsNotExist(err) {
		t.Fatal("an unlocked append rolled the history over")
	}
	if err := os.WriteFile(p, bytes.Repeat([]byte("x"), MaxHistoryBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := RotateHistory(p); err != nil {
		t.Fatal(err)
	}
	if err := AppendHistory(p, HistoryEntry{Decision: KindBlock}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p + ".1"); fi == nil || fi.Size() != MaxHistoryBytes {
		t.Fatal("full history not rolled over to .1")
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), `"block"`) || len(b) > 1000 {
		t.Fatalf("new history %q", b)
	}
	os.Remove(p)
	target := filepath.Join(dir, "elsewhere")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := AppendHistory(p, HistoryEntry{Decision: KindBlock}); err == nil {
		t.Fatal("history written through a symlink")
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("symlink target created")
	}
}

// A hook call decides once, under the lock: a stop that is not the owner's is
// turned away by the gate alone, and a loop with an advisor finishes its one
// decision with the advisor's verdict, consulted outside the lock.
func TestShellDecidesOncePerCall(t *testing.T) {
	const advisor = `echo '{"prediction":"go on","confidence":0.99}'`
	withAdvisor := func(m *marker.Marker) { m.Loop.Advisor = advisor }
	for _, c := range []struct {
		name      string
		m         *marker.Marker
		env       mapEnv
		input     string
		decisions int
		printed   string
	}{
		{"owner of a story run", active(), nil, `{"session_id":"owner","stop_hook_active":true}`, 1, `"decision":"block"`},
		{"bystander", active(), nil, `{"session_id":"other"}`, 0, ""},
		{"no marker", nil, nil, `{"session_id":"owner"}`, 0, ""},
		{"subagent", active(), nil, `{"session_id":"owner","hook_event_name":"SubagentStop"}`, 0, ""},
		{"child", active(), mapEnv{EnvChild: "true"}, `{"session_id":"c"}`, 1, ""},
		{"owner of a loop", loopMarker(), nil, `{"session_id":"owner","last_assistant_message":"working"}`, 1, loopPrompt},
		{"owner of a loop with an advisor", loopMarker(withAdvisor), nil, `{"session_id":"owner","last_assistant_message":"working"}`, 1, "go on"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.m)
			for k, v := range c.env {
				f.env[k] = v
			}
			f.approve(t, advisor)
			n := 0
			var out bytes.Buffer
			sh := &Shell{In: strings.NewReader(c.input), Out: &out, Getenv: f.env.get, Now: func() time.Time { return t0 },
				ProjectRoot: f.root, Log: Log{}, LockTimeout: time.Second,
				decide: func(in Input, m *marker.Marker, err error, env Env, now time.Time) Decision {
					n++
					return Decide(in, m, err, env, now)
				}}
			sh.Run(context.Background())
			if n != c.decisions {
				t.Errorf("decided %d times, want %d", n, c.decisions)
			}
			if c.printed == "" && out.Len() != 0 || !strings.Contains(out.String(), c.printed) {
				t.Errorf("printed %q, want it to contain %q", out.String(), c.printed)
			}
		})
	}
}

// The advisor runs without the marker lock, and the one decision is
// finished only on the marker it was made on: a loop paused from another
// terminal while the advisor ran stays paused, and the stop goes through.
func TestAMarkerChangedWhileTheAdvisorRanIsKeptAndTheStopGoesThrough(t *testing.T) {
	f := newFixture(t, nil)
	paused := loopMarker(func(m *marker.Marker) { m.Loop.Iteration, m.StopHookBlocks = 4, 3 })
	paused.Pause("paused from another terminal")
	data, err := json.Marshal(paused)
	if err != nil {
		t.Fatal(err)
	}
	pausedFile := filepath.Join(t.TempDir(), "paused.json")
	if err := os.WriteFile(pausedFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// flock -n fails if the hook still held the lock: the advisor would error.
	advisor := fmt.Sprintf(`flock -n %s cp %s %s && echo '{"prediction":"go on","confidence":0.99}'`,
		f.store.LockPath(), pausedFile, f.store.Path)
	if _, err := f.store.Create(context.Background(), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = advisor }), true); err != nil {
		t.Fatal(err)
	}
	f.approve(t, advisor)
	if out := f.run(t, `{"session_id":"owner","last_assistant_message":"working"}`); out != "" {
		t.Fatalf("printed %q: the stop must go through", out)
	}
	m, err := f.store.Read()
	if err != nil || m.Status != marker.StatusPaused || m.Loop.Iteration != paused.Loop.Iteration {
		t.Fatalf("marker %+v %v: want the paused loop as the other terminal left it", m, err)
	}
	h := historyLines(t, f)
	if len(h) != 1 || h[0].Decision != KindFailOpen || h[0].Iteration != paused.Loop.Iteration || h[0].Blocks != paused.StopHookBlocks {
		t.Fatalf("history %+v, want one fail-open line about the marker as it is now", h)
	}
}

// Claude Code's StopFailure (a turn that ended at a limit, read from the
// real 2.1.328's hook input) is recorded as the child's limit, never as a
// finished turn.
func TestShellChildStopFailureStampsALimitNotACompletion(t *testing.T) {
	f := newFixture(t, nil)
	stateDir := filepath.Join(f.root, "state")
	f.env[EnvChild] = "true"
	f.env[EnvSession] = "sa-proj-ab12-e1-s1-2-dev-x9z8"
	f.env[sessionstate.EnvStateDir] = stateDir
	in, err := os.ReadFile("../monitor/testdata/limits/claude-2.1.328-stopfailure-usage_limit.json")
	if err != nil {
		t.Fatal(err)
	}
	if out := f.run(t, string(in)); out != "" {
		t.Fatalf("child got output %q", out)
	}
	st, err := sessionstate.Read(stateDir, "sa-proj-ab12-e1-s1-2-dev-x9z8")
	if err != nil {
		t.Fatal(err)
	}
	if st.Completion != nil {
		t.Fatalf("a failed turn was recorded as completed: %+v", st.Completion)
	}
	if l := st.Limit; l == nil || l.Event != "StopFailure" || l.Error != "rate_limit" || l.At != marker.Timestamp(t0) ||
		!strings.Contains(l.Message, "You've hit your 5-hour limit") || !strings.HasSuffix(st.Transcript, ".jsonl") {
		t.Fatalf("limit %+v, transcript %q", st.Limit, st.Transcript)
	}
}
