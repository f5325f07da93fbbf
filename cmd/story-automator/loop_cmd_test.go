package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/approval"
	"github.com/story-automator/story-automator/marker"
)

// loopRun runs the CLI in-process in root with env as the environment and
// returns the decoded JSON object and the exit code.
func loopRun(t *testing.T, root string, env map[string]string, stdin string, args ...string) (map[string]any, int) {
	t.Helper()
	var out bytes.Buffer
	s := testStreams(root, &out)
	s.Getenv = func(k string) string { return env[k] }
	s.In = strings.NewReader(stdin)
	code := Run(args, s)
	if out.Len() == 0 {
		return nil, code
	}
	var obj map[string]any
	if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
		t.Fatalf("%v printed %q", args, out.String())
	}
	return obj, code
}

func loopMarkerOf(t *testing.T, root string) *marker.Marker {
	t.Helper()
	m, err := marker.NewStore(root, func(string) string { return "" }).Read()
	if err != nil {
		t.Fatalf("read marker: %v", err)
	}
	return m
}

func TestLoopStartDefaultsAndPromptPosition(t *testing.T) {
	for _, args := range [][]string{
		{"loop", "start", "fix", "the", "tests", "--completion-promise", "DONE"},
		{"loop", "start", "--completion-promise", "DONE", "fix the tests"},
	} {
		root := t.TempDir()
		out, code := loopRun(t, root, map[string]string{"CLAUDE_CODE_SESSION_ID": "sess-1"}, "", args...)
		if code != 0 || out["ok"] != true || out["replaced"] != false {
			t.Fatalf("%v: %d %v", args, code, out)
		}
		m := loopMarkerOf(t, root)
		l := m.Loop
		if m.Mode != marker.ModeLoop || m.Status != marker.StatusActive || m.OwnerSession != "sess-1" ||
			l.Prompt != "fix the tests" || l.Iteration != 1 || l.MaxIterations != 20 || l.CompletionPromise != "DONE" ||
			l.Threshold != 0.6 || l.Advisor != "" || l.AdvisorTimeout != "" || l.StartedAt == "" {
			t.Fatalf("%v: marker %+v loop %+v", args, m, l)
		}
		// The default 20 iterations meet Claude Code's cap of 8 consecutive blocks: the user is told.
		if w, _ := out["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=19") {
			t.Errorf("warnings %v, want only Claude Code's block cap", out["warnings"])
		}
	}
}

func TestLoopStartOptions(t *testing.T) {
	root := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	out, code := loopRun(t, root, env, "", "loop", "start", "p", "--max-iterations", "1000", "--exit-strategy", "composite:auto,fix_plan",
		"--fix-plan", "plan.md", "--advisor", " ./predict.sh ", "--advisor-timeout", "3s", "--threshold", "0.8", "--owner-session", "o")
	if code != 0 {
		t.Fatalf("%d %v", code, out)
	}
	// The advisor, as the marker keeps it, is approved in the user's state folder.
	if st, err := approval.Open(func(k string) string { return env[k] }); err != nil || !st.Approved("./predict.sh") {
		t.Fatalf("loop start did not approve its advisor in %s: %v", st.Dir, err)
	}
	l := loopMarkerOf(t, root).Loop
	if l.MaxIterations != 1000 || l.ExitStrategy != "composite:auto,fix_plan" || l.FixPlan != filepath.Join(root, "plan.md") ||
		l.Advisor != "./predict.sh" || l.AdvisorTimeout != "3s" || l.Threshold != 0.8 {
		t.Fatalf("loop %+v", l)
	}
	if !strings.Contains(strings.Join(anyStrings(out["warnings"]), "\n"), "plan.md does not exist yet") {
		t.Errorf("warnings %v", out["warnings"])
	}
	root = t.TempDir()
	out, _ = loopRun(t, root, nil, "the prompt from a file\n", "loop", "start", "--prompt-file", "-")
	if loopMarkerOf(t, root).Loop.Prompt != "the prompt from a file" {
		t.Fatalf("prompt file: %v", out)
	}
	if !strings.Contains(strings.Join(anyStrings(out["warnings"]), "\n"), "no owner session") {
		t.Errorf("an unowned loop must warn: %v", out["warnings"])
	}
}

func anyStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// A session that cannot write the user's state folder (a sandboxed one)
// cannot start a loop whose advisor the hook would never run.
func TestLoopStartRefusesAnAdvisorItCannotApprove(t *testing.T) {
	root := t.TempDir()
	out, code := loopRun(t, root, nil, "", "loop", "start", "p", "--advisor", "./predict.sh", "--owner-session", "o")
	if code != 1 || out["error"] != "approval_failed" || !strings.Contains(fmt.Sprint(out["action"]), "your own terminal") {
		t.Fatalf("%d %v", code, out)
	}
	if _, err := os.Stat(marker.ResolvePath(root, func(string) string { return "" })); err == nil {
		t.Fatal("a refused loop start wrote a marker")
	}
}

func TestLoopStartUsageErrors(t *testing.T) {
	cases := map[string][]string{
		"no prompt":                  {"loop", "start"},
		"unlimited":                  {"loop", "start", "p", "--max-iterations", "0"},
		"above the ceiling":          {"loop", "start", "p", "--max-iterations", "1001"},
		"not a number":               {"loop", "start", "p", "--max-iterations", "many"},
		"threshold zero":             {"loop", "start", "p", "--threshold", "0"},
		"threshold above one":        {"loop", "start", "p", "--threshold", "1.5"},
		"unknown strategy":           {"loop", "start", "p", "--exit-strategy", "vibes"},
		"unknown composite member":   {"loop", "start", "p", "--exit-strategy", "composite:auto,vibes"},
		"fix_plan without a plan":    {"loop", "start", "p", "--exit-strategy", "fix_plan"},
		"prompt and prompt file":     {"loop", "start", "p", "--prompt-file", "x.md"},
		"advisor timeout too long":   {"loop", "start", "p", "--advisor", "a", "--advisor-timeout", "1h"},
		"advisor outlives the hook":  {"loop", "start", "p", "--advisor", "a", "--advisor-timeout", (agent.HookTimeout * time.Second).String()},
		"status takes no arguments":  {"loop", "status", "extra"},
		"import needs one file":      {"loop", "import"},
		"resume limit out of bounds": {"loop", "resume", "--max-iterations", "0"},
	}
	for name, args := range cases {
		root := t.TempDir()
		out, code := loopRun(t, root, nil, "", args...)
		if code != 2 || out["ok"] != false || out["error"] != "usage_error" {
			t.Errorf("%s: exit %d %v", name, code, out)
		}
		if _, err := os.Stat(marker.ResolvePath(root, func(string) string { return "" })); err == nil {
			t.Errorf("%s: a usage error wrote a marker", name)
		}
	}
}

func TestLoopStartRefusals(t *testing.T) {
	root := t.TempDir()
	if _, code := loopRun(t, root, nil, "", "loop", "start", "first", "--owner-session", "a"); code != 0 {
		t.Fatal("first loop")
	}
	out, code := loopRun(t, root, nil, "", "loop", "start", "second", "--owner-session", "b")
	if code != 1 || out["error"] != "loop_active" || loopMarkerOf(t, root).Loop.Prompt != "first" {
		t.Fatalf("two loops: %d %v", code, out)
	}
	loopRun(t, root, nil, "", "loop", "pause")
	if out, code := loopRun(t, root, nil, "", "loop", "start", "second"); code != 1 || out["error"] != "loop_active" {
		t.Fatalf("over a paused loop: %d %v", code, out)
	}
	out, code = loopRun(t, root, nil, "", "loop", "start", "second", "--replace", "--owner-session", "b")
	if code != 0 || out["replaced"] != true || loopMarkerOf(t, root).Loop.Prompt != "second" {
		t.Fatalf("replace: %d %v", code, out)
	}

	story := t.TempDir()
	loopRun(t, story, nil, "", "marker", "create", "--remaining", "2", "--owner-session", "o")
	if out, code := loopRun(t, story, nil, "", "loop", "start", "p"); code != 1 || out["error"] != "story_run_active" {
		t.Fatalf("over a story run: %d %v", code, out)
	}
	for _, sub := range []string{"pause", "resume", "cancel"} {
		if out, code := loopRun(t, story, nil, "", "loop", sub); code != 1 || out["error"] != "not_a_loop" {
			t.Errorf("loop %s on a story run: %d %v", sub, code, out)
		}
	}
	if loopMarkerOf(t, story).Mode != marker.ModeStory {
		t.Fatal("a refused loop command changed the story run")
	}
	loopRun(t, story, nil, "", "marker", "heartbeat", "--remaining", "0")
	if _, code := loopRun(t, story, nil, "", "loop", "start", "p"); code != 0 {
		t.Fatal("a finished story run must not block a loop")
	}

	corrupt := t.TempDir()
	path := marker.ResolvePath(corrupt, func(string) string { return "" })
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := loopRun(t, corrupt, nil, "", "loop", "start", "p"); code != 1 || out["error"] != "marker_corrupt" {
		t.Fatalf("over a corrupt marker: %d %v", code, out)
	}
}

func TestLoopStatusPauseResumeCancel(t *testing.T) {
	root := t.TempDir()
	if out, code := loopRun(t, root, nil, "", "loop", "status"); code != 0 || out["exists"] != false {
		t.Fatalf("status without a loop: %d %v", code, out)
	}
	for _, sub := range []string{"pause", "resume", "cancel"} {
		if out, code := loopRun(t, root, nil, "", "loop", sub); code != 1 || out["error"] != "loop_not_found" {
			t.Errorf("loop %s without a loop: %d %v", sub, code, out)
		}
	}
	loopRun(t, root, nil, "", "loop", "start", "p", "--max-iterations", "4", "--owner-session", "o")
	out, _ := loopRun(t, root, nil, "", "loop", "status")
	if out["active"] != true || out["status"] != "active" || out["ownerSession"] != "o" || out["loop"].(map[string]any)["maxIterations"] != 4.0 {
		t.Fatalf("status %v", out)
	}
	loopRun(t, root, nil, "", "loop", "pause", "--reason", "lunch")
	out, _ = loopRun(t, root, nil, "", "loop", "status")
	if out["active"] != false || out["status"] != "paused" || out["pauseReason"] != "lunch" {
		t.Fatalf("paused status %v", out)
	}
	store := marker.NewStore(root, func(string) string { return "" })
	if _, err := store.Modify(t.Context(), func(m *marker.Marker) error { m.StopHookBlocks = 3; m.Loop.NoProgressIterations = 2; return nil }); err != nil {
		t.Fatal(err)
	}
	loopRun(t, root, nil, "", "loop", "resume", "--max-iterations", "9")
	m := loopMarkerOf(t, root)
	if m.Status != marker.StatusActive || m.PauseReason != "" || m.StopHookBlocks != 0 || m.Loop.NoProgressIterations != 0 || m.Loop.MaxIterations != 9 {
		t.Fatalf("after resume %+v %+v", m, m.Loop)
	}
	if out, code := loopRun(t, root, nil, "", "loop", "cancel"); code != 0 || out["removed"] != true {
		t.Fatalf("cancel %d %v", code, out)
	}
	if out, _ := loopRun(t, root, nil, "", "loop", "status"); out["exists"] != false {
		t.Fatalf("after cancel %v", out)
	}
}
