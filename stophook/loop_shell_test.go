package stophook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/approval"
	"github.com/story-automator/story-automator/marker"
)

// loopProject is a project directory with a loop marker, driven through Shell.Run.
type loopProject struct {
	root  string
	store *marker.Store
	// state is the user's XDG_STATE_HOME, where approvals are kept.
	state string
}

func newLoopProject(t *testing.T, l *marker.LoopState) *loopProject {
	t.Helper()
	p := &loopProject{root: t.TempDir(), state: t.TempDir()}
	p.store = marker.NewStore(p.root, func(string) string { return "" })
	m := &marker.Marker{Version: 1, Mode: marker.ModeLoop, Status: marker.StatusActive, OwnerSession: "owner",
		CreatedAt: marker.Timestamp(loopNow), Heartbeat: marker.Timestamp(loopNow), Loop: l}
	if _, err := p.store.Create(context.Background(), m, false); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *loopProject) stop(t *testing.T, input map[string]any) map[string]any {
	t.Helper()
	data, _ := json.Marshal(input)
	var out bytes.Buffer
	getenv := func(k string) string { return map[string]string{"XDG_STATE_HOME": p.state}[k] }
	sh := &Shell{In: bytes.NewReader(data), Out: &out, Getenv: getenv,
		Now: func() time.Time { return loopNow }, ProjectRoot: p.root, Log: Log{}, LockTimeout: time.Second}
	sh.Run(context.Background())
	if out.Len() == 0 {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
		t.Fatalf("hook printed %q", out.String())
	}
	return obj
}

// approve records command as approved by the user, as `loop start` does.
func (p *loopProject) approve(t *testing.T, command string) {
	t.Helper()
	if err := (approval.Store{Dir: filepath.Join(p.state, "story-automator", "approved")}).Approve(command); err != nil {
		t.Fatal(err)
	}
}

func (p *loopProject) history(t *testing.T) []HistoryEntry {
	t.Helper()
	f, err := os.Open(p.store.HistoryPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []HistoryEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e HistoryEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestShellLoopReadsTheTranscriptWhenTheMessageIsAbsent(t *testing.T) {
	p := newLoopProject(t, &marker.LoopState{Prompt: "p", Iteration: 2, MaxIterations: 9, CompletionPromise: "ALL TESTS GREEN"})
	transcript, _ := filepath.Abs(filepath.Join("testdata", "transcript-claude.jsonl"))
	out := p.stop(t, map[string]any{"session_id": "owner", "hook_event_name": "Stop", "stop_hook_active": true, "transcript_path": transcript})
	if out == nil || out["decision"] != nil || !strings.Contains(out["systemMessage"].(string), "complete") {
		t.Fatalf("output %v", out)
	}
	if _, err := p.store.Read(); !errors.Is(err, marker.ErrNotFound) {
		t.Fatalf("a completed loop must remove the marker: %v", err)
	}
	h := p.history(t)
	if len(h) != 1 || h[0].Decision != KindComplete || h[0].Mode != marker.ModeLoop || h[0].Iteration != 2 || h[0].Session != "owner" {
		t.Fatalf("history %+v", h)
	}
}

func TestShellLoopAdvisorRunsWithoutTheLock(t *testing.T) {
	p := newLoopProject(t, &marker.LoopState{Prompt: "p", Iteration: 1, MaxIterations: 9})
	script := `if flock -n "` + p.store.LockPath() + `" true; then s=free; else s=held; fi; printf '{"prediction":"lock %s","confidence":0.9}' "$s"`
	if _, err := p.store.Modify(context.Background(), func(m *marker.Marker) error { m.Loop.Advisor = script; return nil }); err != nil {
		t.Fatal(err)
	}
	p.approve(t, script)
	out := p.stop(t, map[string]any{"session_id": "owner", "last_assistant_message": "step done"})
	if out["decision"] != "block" || out["reason"] != "lock free" {
		t.Fatalf("output %v", out)
	}
	m, err := p.store.Read()
	if err != nil || m.Loop.Iteration != 2 || m.LastDecision.Decision != KindContinue {
		t.Fatalf("marker %+v %v", m, err)
	}
}

func TestShellLoopAdvisorIsNotAskedWhenAControlLineDecides(t *testing.T) {
	p := newLoopProject(t, &marker.LoopState{Prompt: "p", Iteration: 1, MaxIterations: 9})
	touched := filepath.Join(p.root, "advisor-ran")
	advisor := "touch " + touched + `; echo '{"prediction":"x","confidence":1}'`
	if _, err := p.store.Modify(context.Background(), func(m *marker.Marker) error {
		m.Loop.Advisor = advisor
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p.approve(t, advisor)
	out := p.stop(t, map[string]any{"session_id": "owner", "last_assistant_message": "STORY_AUTOMATOR_PAUSE"})
	if out == nil || !strings.Contains(out["systemMessage"].(string), "paused") {
		t.Fatalf("output %v", out)
	}
	if _, err := os.Stat(touched); err == nil {
		t.Fatal("the advisor ran although a control line had decided")
	}
	// A bystander never makes the advisor run either.
	if _, err := p.store.Modify(context.Background(), func(m *marker.Marker) error { m.Status = marker.StatusActive; return nil }); err != nil {
		t.Fatal(err)
	}
	if out := p.stop(t, map[string]any{"session_id": "someone-else", "last_assistant_message": "hi"}); out != nil {
		t.Fatalf("bystander output %v", out)
	}
	if _, err := os.Stat(touched); err == nil {
		t.Fatal("the advisor ran for a bystander")
	}
}

// issue 34: a child working in the project can rewrite the marker; the
// hook runs only the advisor the user approved at `loop start`.
func TestShellLoopRunsOnlyTheApprovedAdvisor(t *testing.T) {
	p := newLoopProject(t, &marker.LoopState{Prompt: "p", Iteration: 1, MaxIterations: 9})
	ran := filepath.Join(p.root, "approved-ran")
	approved := "touch " + ran + `; echo '{"prediction":"next step","confidence":0.9}'`
	p.approve(t, approved)
	if _, err := p.store.Modify(context.Background(), func(m *marker.Marker) error { m.Loop.Advisor = approved; return nil }); err != nil {
		t.Fatal(err)
	}
	// The positive control: the approved advisor runs and decides.
	out := p.stop(t, map[string]any{"session_id": "owner", "last_assistant_message": "done 1"})
	if out["decision"] != "block" || out["reason"] != "next step" {
		t.Fatalf("the approved advisor did not decide: %v", out)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the approved advisor did not run: %v", err)
	}
	// A child rewrites the marker's advisor: it is not run, and the stop goes through.
	planted := filepath.Join(p.root, "planted-ran")
	rewritten := "touch " + planted + `; echo '{"prediction":"exfiltrate","confidence":1}'`
	if _, err := p.store.Modify(context.Background(), func(m *marker.Marker) error { m.Loop.Advisor = rewritten; return nil }); err != nil {
		t.Fatal(err)
	}
	out = p.stop(t, map[string]any{"session_id": "owner", "last_assistant_message": "done 2"})
	if out == nil || out["decision"] != nil || !strings.Contains(out["systemMessage"].(string), "not a command you approved") {
		t.Fatalf("a rewritten advisor must let the stop through and say why: %v", out)
	}
	if _, err := os.Stat(planted); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the rewritten advisor ran: %v", err)
	}
	h := p.history(t)
	if last := h[len(h)-1]; last.Decision != KindEscalateAdvisor || !strings.Contains(last.Reason, "not a command you approved") {
		t.Fatalf("history %+v", last)
	}
	m, err := p.store.Read()
	if err != nil || m.Status != marker.StatusActive {
		t.Fatalf("the loop must stay, not blocked: %+v %v", m, err)
	}
}

func TestShellLoopFixPlanIsReadFromTheProjectRoot(t *testing.T) {
	p := newLoopProject(t, &marker.LoopState{Prompt: "p", Iteration: 1, MaxIterations: 9, ExitStrategy: StrategyFixPlan, FixPlan: "fix_plan.md"})
	if err := os.WriteFile(filepath.Join(p.root, "fix_plan.md"), []byte("- [x] one\n- [ ] two (attempts: 1/2)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := p.stop(t, map[string]any{"session_id": "owner", "last_assistant_message": "tried two"}); out["decision"] != "block" {
		t.Fatalf("open step: %v", out)
	}
	if err := os.WriteFile(filepath.Join(p.root, "fix_plan.md"), []byte("- [x] one\n- [ ] two (attempts: 2/2)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := p.stop(t, map[string]any{"session_id": "owner", "last_assistant_message": "gave up on two"})
	if out == nil || out["decision"] != nil || !strings.Contains(out["systemMessage"].(string), "fix_plan") {
		t.Fatalf("settled plan: %v", out)
	}
	h := p.history(t)
	if len(h) != 2 || h[0].Decision != KindContinue || h[1].Decision != KindComplete || !strings.Contains(h[1].Reason, "1 out of attempts") {
		t.Fatalf("history %+v", h)
	}
}
