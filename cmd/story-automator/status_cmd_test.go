package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/status"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// pausedRun writes what an escalated run leaves: a state document and a paused marker.
func pausedRun(t *testing.T, root string) string {
	t.Helper()
	path := filepath.Join(orchestrator.RunsDir(root), "run-20261122-120000-abcd.md")
	st := &orchestrator.State{Version: orchestrator.StateVersion, RunID: "run-20261122-120000-abcd", Status: orchestrator.RunPaused,
		ProjectRoot: root, StartedAt: "2026-11-22T11:59:00Z", UpdatedAt: "2026-11-22T11:59:30Z",
		Config: orchestrator.RunConfig{Stories: "all", Agent: "sim", Parallel: 1, MaxCycles: 5, StateFile: path},
		Units: []*orchestrator.Unit{
			{Key: "1-1", Kind: orchestrator.KindStory, Epic: "1", Dotted: "1.1", Status: orchestrator.StatusDone, Commit: "0123456789abcdef",
				Steps: []*orchestrator.StepState{{Name: "create", Status: "verified"}, {Name: "dev", Status: "verified"}}},
			{Key: "1-2", Kind: orchestrator.KindStory, Epic: "1", Dotted: "1.2", Status: orchestrator.StatusEscalated,
				Worktree: "/p/.git/story-automator/worktrees/run-x/1-2", Steps: []*orchestrator.StepState{{Name: "create", Status: "skipped"}, {Name: "dev", Status: "escalated"}}},
		},
		Escalation: &orchestrator.Escalation{Unit: "1.2", Step: "dev", Reason: "dev story of 1.2: 3 attempts failed", Action: "fix it and resume"}}
	if err := orchestrator.SaveState(path, st); err != nil {
		t.Fatal(err)
	}
	store := marker.NewStore(root, func(string) string { return "" })
	_, err := store.Create(context.Background(), &marker.Marker{Version: 1, Mode: marker.ModeStory, Status: marker.StatusPaused,
		CurrentStory: "1.2", CurrentStep: "dev", StoriesRemaining: 1, StateFile: path, PauseReason: "escalated",
		LastDecision: &marker.LastDecision{At: "2026-11-22T11:59:50Z", Decision: "block", Reason: "story 1.2 is in dev"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStatusWithoutARunSaysSo(t *testing.T) {
	out, code := runOnTerminal(t, t.TempDir(), "status")
	if code != 0 || !strings.Contains(out, "No run in this project yet") || !strings.Contains(out, "Marker: none") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestStatusShowsTheRunMarkerStoriesAndLastDecision(t *testing.T) {
	root := t.TempDir()
	path := pausedRun(t, root)
	out, code := runOnTerminal(t, root, "status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"Run run-20261122-120000-abcd · paused · 1/2 stories done", path,
		"Marker: paused story · story 1.2 · step dev · 1 remaining", "1.1      done      create ✓  dev ✓  0123456",
		"1.2      escalated create –  dev !", "worktree /p/.git/story-automator/worktrees/run-x/1-2", "Escalated: dev story of 1.2", "what to do: fix it and resume",
		"Last hook decision: block", "Live sessions: 0"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status lacks %q:\n%s", want, out)
		}
	}
	out, _ = runInProcess(t, root, "status", "--json")
	var v struct {
		OK     bool `json:"ok"`
		Marker struct {
			Exists bool `json:"exists"`
		} `json:"marker"`
		Run struct {
			Status string        `json:"status"`
			Units  []status.Unit `json:"units"`
		} `json:"run"`
		LastDecision *marker.LastDecision `json:"lastDecision"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || !v.OK || !v.Marker.Exists || v.Run.Status != "paused" ||
		v.Run.Units[1].Current != "dev" || v.Run.Units[1].Worktree == "" || v.LastDecision == nil || v.LastDecision.Decision != "block" {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
}

func TestStatusReadsTheLastDecisionFromHistoryWhenTheMarkerIsGone(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	history := `{"ts":"2026-11-22T11:00:00Z","decision":"block","reason":"old"}` + "\n" +
		`{"ts":"2026-11-22T11:58:00Z","decision":"breaker-open","reason":"no progress"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "story-automator.history.jsonl"), []byte(history), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := runOnTerminal(t, root, "status")
	if !strings.Contains(out, "Last hook decision: breaker-open, 2m0s ago: no progress") {
		t.Fatalf("status:\n%s", out)
	}
}

func TestStatusWatchEndsWhenTheRunIsDone(t *testing.T) {
	root := t.TempDir()
	path := pausedRun(t, root)
	st, err := orchestrator.LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Status, st.Escalation = orchestrator.RunDone, nil
	if err := orchestrator.SaveState(path, st); err != nil {
		t.Fatal(err)
	}
	out, code := runInProcess(t, root, "status", "--watch", "--json", "--interval", "10ms")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"status":"done"`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// status lists this project's sessions as session list does: by the state
// file's project root, not by a name prefix alone (a session named like
// ours with no state of this project is not ours).
func TestStatusListsOnlySessionsThisProjectsStateNames(t *testing.T) {
	p := newSessionProject(t, tmuxtest.Socket(t))
	pausedRun(t, p.root)
	name := p.spawn(nil, "--agent", "custom", "--command", "sleep 60 {prompt}", "--prompt", "1")
	impostor := child.ProjectPrefix(p.root) + "impostor"
	c := exec.Command("tmux", "-L", p.socket, "new-session", "-d", "-s", impostor, "sleep 60")
	c.Env = cleanEnv()
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	res, _ := p.run(nil, "status", "--json")
	var names []string
	list, _ := res["sessions"].([]any)
	for _, s := range list {
		names = append(names, s.(map[string]any)["session"].(string))
	}
	if len(names) != 1 || names[0] != name {
		t.Fatalf("status lists %v, want only %s", names, name)
	}
}
