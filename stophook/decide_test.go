package stophook

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func boolp(b bool) *bool { return &b }
func intp(n int) *int    { return &n }

// active returns an owned story marker whose hook has already seen its heartbeat.
func active(mut ...func(*marker.Marker)) *marker.Marker {
	hb := marker.Timestamp(t0.Add(-time.Minute))
	m := &marker.Marker{
		Version: 1, Mode: marker.ModeStory, Status: marker.StatusActive,
		Epic: "1", CurrentStory: "1.2", CurrentStep: "dev", StoriesRemaining: 3,
		OwnerSession: "owner", CreatedAt: hb, Heartbeat: hb,
		StopHookSeenHeartbeat: hb, StopHookSeenRemaining: intp(3), StopHookBlocks: 1,
	}
	for _, f := range mut {
		f(m)
	}
	return m
}

func env(mut ...func(*Env)) Env {
	e := Env{MaxBlocks: DefaultMax, StaleAfter: DefaultStale, ProcessAlive: func(int) bool { return true }}
	for _, f := range mut {
		f(&e)
	}
	return e
}

func ownerIn(active *bool) Input {
	return Input{SessionID: "owner", StopHookActive: active, HookEventName: "Stop"}
}

func TestDecide(t *testing.T) {
	corrupt := errors.Join(marker.ErrCorrupt, errors.New("bad json"))
	notObject := errors.Join(marker.ErrCorrupt, marker.ErrNotObject)
	cases := []struct {
		name       string
		in         Input
		m          *marker.Marker
		readErr    error
		env        Env
		kind       string // "" = no owner decision
		block      bool
		sysMsg     string // substring expected in systemMessage
		written    bool   // a marker must be persisted
		blocks     int    // stopHookBlocks of the persisted marker
		stampChild bool
	}{
		{name: "child with session stamps and never blocks", in: ownerIn(boolp(true)), m: active(), env: env(func(e *Env) { e.Child = true; e.ChildSession = "sa-x-1" }), stampChild: true},
		{name: "child SubagentStop does not stamp", in: Input{SessionID: "owner", HookEventName: "SubagentStop"}, m: active(), env: env(func(e *Env) { e.Child = true; e.ChildSession = "sa-x-1" })},
		{name: "unknown marker version fails open", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.Version = marker.SchemaVersion + 1 }), env: env()},
		{name: "unknown marker mode fails open", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.Mode = "future"; m.StoriesRemaining = 0 }), env: env()},
		{name: "background task listed as a bare id allows", in: Input{SessionID: "owner", StopHookActive: boolp(true), BackgroundTasks: []byte(`["bash_1"]`)}, m: active(), env: env(), kind: KindAllowBackground, written: true, blocks: 1},
		{name: "child without session never blocks", in: ownerIn(boolp(true)), m: active(), env: env(func(e *Env) { e.Child = true })},
		{name: "SubagentStop never blocks", in: Input{SessionID: "owner", HookEventName: "SubagentStop"}, m: active(), env: env()},
		{name: "no marker", in: ownerIn(boolp(true)), readErr: marker.ErrNotFound, env: env()},
		{name: "corrupt marker", in: ownerIn(boolp(true)), readErr: corrupt, env: env()},
		{name: "non-object marker", in: ownerIn(boolp(true)), readErr: notObject, env: env()},
		{name: "paused", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.Status = marker.StatusPaused }), env: env()},
		{name: "remaining 0", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.StoriesRemaining = 0 }), env: env()},
		{name: "owner match blocks and counts", in: ownerIn(boolp(true)), m: active(), env: env(), kind: KindBlock, block: true, written: true, blocks: 2},
		{name: "bystander allowed, nothing written", in: Input{SessionID: "someone-else", StopHookActive: boolp(true)}, m: active(), env: env()},
		{name: "missing session_id with an owner", in: Input{StopHookActive: boolp(true)}, m: active(), env: env()},
		{name: "unowned legacy marker guards everyone", in: Input{SessionID: "anyone", StopHookActive: boolp(true)}, m: active(func(m *marker.Marker) { m.OwnerSession = "" }), env: env(), kind: KindBlock, block: true, written: true, blocks: 2},
		{name: "dead orchestrator: pid gone", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.OwnerPid = 4242 }), env: env(func(e *Env) { e.ProcessAlive = func(int) bool { return false } }), kind: KindReleaseStale, sysMsg: "pid 4242", written: true, blocks: 1},
		{name: "dead orchestrator: its run lock is free though its pid now names a live process", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.OwnerPid, m.OwnerLock = 4242, "/p/.story-automator/run.lock" }), env: env(func(e *Env) { e.LockHeld = func(string) bool { return false } }), kind: KindReleaseStale, sysMsg: "run lock /p/.story-automator/run.lock is free", written: true, blocks: 1},
		{name: "live orchestrator: its run lock is held", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.OwnerPid, m.OwnerLock = 4242, "/p/.story-automator/run.lock" }), env: env(func(e *Env) { e.LockHeld = func(string) bool { return true } }), kind: KindBlock, block: true, written: true, blocks: 2},
		{name: "dead orchestrator: its pid was reused by a process started later", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.OwnerPid, m.OwnerPidStart = 4242, 100 }), env: env(func(e *Env) { e.ProcessStart = func(int) (uint64, bool) { return 200, true } }), kind: KindReleaseStale, sysMsg: "another process", written: true, blocks: 1},
		{name: "live orchestrator: same pid, same start", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.OwnerPid, m.OwnerPidStart = 4242, 100 }), env: env(func(e *Env) { e.ProcessStart = func(int) (uint64, bool) { return 100, true } }), kind: KindBlock, block: true, written: true, blocks: 2},
		{name: "dead orchestrator: unowned and stale", in: Input{SessionID: "s"}, m: active(func(m *marker.Marker) {
			m.OwnerSession = ""
			m.Heartbeat = marker.Timestamp(t0.Add(-31 * time.Minute))
			m.StopHookSeenHeartbeat = m.Heartbeat
		}), env: env(), kind: KindReleaseStale, sysMsg: "looks dead", written: true, blocks: 1},
		{name: "owned long step is not stale", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) {
			m.Heartbeat = marker.Timestamp(t0.Add(-5 * time.Hour))
			m.StopHookSeenHeartbeat = m.Heartbeat
		}), env: env(), kind: KindBlock, block: true, written: true, blocks: 2},
		{name: "running background task allows without counting", in: Input{SessionID: "owner", StopHookActive: boolp(true), BackgroundTasks: []byte(`[{"id":"b1","command":"sleep 100","status":"running"}]`)}, m: active(), env: env(), kind: KindAllowBackground, written: true, blocks: 1},
		{name: "finished background task does not allow", in: Input{SessionID: "owner", StopHookActive: boolp(true), BackgroundTasks: []byte(`[{"id":"b1","status":"completed"}]`)}, m: active(), env: env(), kind: KindBlock, block: true, written: true, blocks: 2},
		{name: "progress by heartbeat resets", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.Heartbeat = marker.Timestamp(t0); m.StopHookBlocks = 4 }), env: env(), kind: KindBlock, block: true, written: true, blocks: 0},
		{name: "progress by remaining resets", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.StoriesRemaining = 2; m.StopHookBlocks = 4 }), env: env(), kind: KindBlock, block: true, written: true, blocks: 0},
		{name: "explicit stop_hook_active false resets", in: ownerIn(boolp(false)), m: active(func(m *marker.Marker) { m.StopHookBlocks = 4 }), env: env(), kind: KindBlock, block: true, written: true, blocks: 0},
		{name: "missing stop_hook_active counts as true", in: ownerIn(nil), m: active(func(m *marker.Marker) { m.StopHookBlocks = 3 }), env: env(), kind: KindBlock, block: true, written: true, blocks: 4},
		{name: "release at the cap resets the count", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.StopHookBlocks = 4 }), env: env(), kind: KindBreakerOpen, sysMsg: "circuit breaker", written: true, blocks: 0},
		{name: "MAX_STOP_BLOCKS valid raises the cap", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.StopHookBlocks = 4 }), env: EnvFrom(mapEnv{EnvMaxBlocks: "7"}.get), kind: KindBlock, block: true, written: true, blocks: 5},
		{name: "MAX_STOP_BLOCKS valid lowers the cap", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.StopHookBlocks = 1 }), env: EnvFrom(mapEnv{EnvMaxBlocks: "2"}.get), kind: KindBreakerOpen, sysMsg: "circuit breaker", written: true, blocks: 0},
		{name: "MAX_STOP_BLOCKS invalid falls back to 5", in: ownerIn(boolp(true)), m: active(func(m *marker.Marker) { m.StopHookBlocks = 4 }), env: EnvFrom(mapEnv{EnvMaxBlocks: "lots"}.get), kind: KindBreakerOpen, sysMsg: "circuit breaker", written: true, blocks: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before []byte
			if tc.m != nil {
				before, _ = tc.m.Encode()
			}
			d := Decide(tc.in, tc.m, tc.readErr, tc.env, t0)
			if d.Kind != tc.kind {
				t.Fatalf("kind = %q, want %q (reason %q)", d.Kind, tc.kind, d.Reason)
			}
			if d.Blocks() != tc.block {
				t.Fatalf("blocks = %v, want %v (output %+v)", d.Blocks(), tc.block, d.Output)
			}
			if tc.sysMsg != "" && (d.Output == nil || !strings.Contains(d.Output.SystemMessage, tc.sysMsg)) {
				t.Fatalf("systemMessage %+v lacks %q", d.Output, tc.sysMsg)
			}
			if !tc.block && tc.sysMsg == "" && d.Output != nil {
				t.Fatalf("expected no output, got %+v", d.Output)
			}
			if (d.Next != nil) != tc.written {
				t.Fatalf("written = %v, want %v", d.Next != nil, tc.written)
			}
			if tc.written && d.Next.StopHookBlocks != tc.blocks {
				t.Fatalf("stopHookBlocks = %d, want %d", d.Next.StopHookBlocks, tc.blocks)
			}
			if d.StampChild != tc.stampChild {
				t.Fatalf("stampChild = %v, want %v", d.StampChild, tc.stampChild)
			}
			if tc.m != nil {
				after, _ := tc.m.Encode()
				if string(after) != string(before) {
					t.Fatal("Decide changed its input marker")
				}
			}
		})
	}
}

func TestDecideRecordsWhatTheHookSaw(t *testing.T) {
	m := active(func(m *marker.Marker) { m.Heartbeat = marker.Timestamp(t0); m.StoriesRemaining = 2 })
	d := Decide(ownerIn(boolp(true)), m, nil, env(), t0)
	if d.Next.StopHookSeenHeartbeat != m.Heartbeat || d.Next.StopHookSeenRemaining == nil || *d.Next.StopHookSeenRemaining != 2 {
		t.Fatalf("seen = %q/%v", d.Next.StopHookSeenHeartbeat, d.Next.StopHookSeenRemaining)
	}
	if d.Next.LastDecision == nil || d.Next.LastDecision.Decision != KindBlock || d.Next.LastDecision.At != marker.Timestamp(t0) {
		t.Fatalf("lastDecision = %+v", d.Next.LastDecision)
	}
	// The same stop again, without progress, now counts.
	d2 := Decide(ownerIn(boolp(true)), d.Next, nil, env(), t0.Add(time.Second))
	if d2.Next.StopHookBlocks != 1 {
		t.Fatalf("second block count = %d, want 1", d2.Next.StopHookBlocks)
	}
}

func TestBlockReasonNamesStoryStepAndMonitor(t *testing.T) {
	d := Decide(ownerIn(boolp(true)), active(func(m *marker.Marker) { m.StateFile = "/p/state.md" }), nil, env(), t0)
	for _, want := range []string{"story 1.2", "step dev", "Run next: `story-automator monitor-session", "never poll tmux", "3 stories remaining"} {
		if !strings.Contains(d.Output.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, d.Output.Reason)
		}
	}
	if strings.Contains(d.Output.Reason, "status --wait") {
		t.Errorf("a session-driven run was told to wait on a headless one: %s", d.Output.Reason)
	}
}

// A headless run (a `run` process owns the marker) drives its own steps: the
// owner is told to wait on it, and nothing else — a Claude Code session as a
// background task (it is woken when the wait returns, spending no turn while
// the run works), a Codex session with the wait bounded under its tool's limit.
func TestBlockReasonOfAHeadlessRunNamesTheWait(t *testing.T) {
	e := env()
	e.ProcessAlive = func(int) bool { return true }
	codex := ownerIn(boolp(true))
	codex.TurnID = "t-1"
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"claude", ownerIn(boolp(true)), "as a background task (Bash run_in_background), then end your turn — you are woken when it returns: `story-automator status --wait --return-after 0`"},
		{"codex", codex, "Run next: `story-automator status --wait` (it blocks"},
	} {
		d := Decide(tc.in, active(func(m *marker.Marker) { m.OwnerPid = 4242 }), nil, e, t0)
		if d.Output == nil || d.Output.Decision != "block" {
			t.Fatalf("%s: decision %+v", tc.name, d)
		}
		r := d.Output.Reason
		if !strings.Contains(r, tc.want) || strings.Contains(r, "monitor-session") ||
			strings.Contains(r, "marker heartbeat") || !strings.Contains(r, "pid 4242") {
			t.Fatalf("%s: reason: %s", tc.name, r)
		}
		if n := strings.Count(r, "`story-automator "); n != 1 {
			t.Fatalf("%s: the reason names %d commands, want exactly one: %s", tc.name, n, r)
		}
	}
}

func TestEnvFrom(t *testing.T) {
	e := EnvFrom(mapEnv{EnvChild: "true", EnvSession: "sa-1", EnvMaxBlocks: "0", EnvStaleAfter: "10m"}.get)
	if !e.Child || e.ChildSession != "sa-1" || e.MaxBlocks != DefaultMax || e.StaleAfter != 10*time.Minute {
		t.Fatalf("%+v", e)
	}
	if EnvFrom(mapEnv{EnvChild: "false"}.get).Child {
		t.Fatal("STORY_AUTOMATOR_CHILD=false must not mark a child")
	}
}

type mapEnv map[string]string

func (m mapEnv) get(k string) string { return m[k] }

// A marker made inside an agent session that did not say its id is claimed
// by the first session to stop; from then on another session is a bystander.
// A plain unowned marker still guards everyone.
func TestClaimOnStopMakesTheFirstStoppingSessionTheOwner(t *testing.T) {
	m := active(func(m *marker.Marker) { m.OwnerSession, m.ClaimOnStop = "", true })
	d := Decide(Input{SessionID: "orchestrator", StopHookActive: boolp(true)}, m, nil, env(), t0)
	if !d.Blocks() || d.Next == nil || d.Next.OwnerSession != "orchestrator" || d.Next.ClaimOnStop {
		t.Fatalf("first stop: %+v next %+v", d, d.Next)
	}
	if m.OwnerSession != "" || !m.ClaimOnStop {
		t.Fatal("Decide changed its input marker")
	}
	if d := Decide(Input{SessionID: "bystander", StopHookActive: boolp(true)}, d.Next, nil, env(), t0); d.Blocks() || d.Next != nil {
		t.Fatalf("a bystander after the claim: %+v", d)
	}
	// The claim holds whatever the first decision is, e.g. a background task.
	bg := Input{SessionID: "orchestrator", StopHookActive: boolp(true), BackgroundTasks: []byte(`["bash_1"]`)}
	if d := Decide(bg, m, nil, env(), t0); d.Kind != KindAllowBackground || d.Next == nil || d.Next.OwnerSession != "orchestrator" {
		t.Fatalf("claim with a background task: %+v", d)
	}
	// No session id, no claim.
	if d := Decide(Input{StopHookActive: boolp(true)}, m, nil, env(), t0); d.Next != nil && d.Next.OwnerSession != "" {
		t.Fatalf("claimed by nobody: %+v", d.Next)
	}
	plain := active(func(m *marker.Marker) { m.OwnerSession = "" })
	for _, s := range []string{"a", "b"} {
		if d := Decide(Input{SessionID: s, StopHookActive: boolp(true)}, plain, nil, env(), t0); !d.Blocks() || d.Next.OwnerSession != "" {
			t.Fatalf("plain unowned marker, session %s: %+v", s, d)
		}
	}
}
