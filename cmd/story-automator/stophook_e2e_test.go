package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runHookProcess runs the built binary's stop-hook with stdin and returns stdout and the exit code.
func runHookProcess(t *testing.T, root string, stdin []byte, env ...string) (string, int) {
	t.Helper()
	out, _, code := runHookEnv(t, []string{builtBinary(t), "stop-hook"}, root, string(stdin), env...)
	return out, code
}

// assertEmptyOrOneObject checks the hook's stdout contract.
func assertEmptyOrOneObject(t *testing.T, out string) map[string]any {
	t.Helper()
	if out == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("stdout is not a JSON object: %q", out)
	}
	if rest := strings.TrimSpace(out[dec.InputOffset():]); rest != "" {
		t.Fatalf("stdout has more than one JSON object: %q", out)
	}
	return obj
}

func ownedMarker(t *testing.T, root string) {
	t.Helper()
	var out bytes.Buffer
	s := testStreams(root, &out)
	if code := Run([]string{"marker", "create", "--remaining", "2", "--story", "1.1", "--owner-session", "owner"}, s); code != 0 {
		t.Fatalf("marker create: %d %s", code, out.String())
	}
}

func TestHookProcessBadInputsExitZeroAndPrintNothingOrOneObject(t *testing.T) {
	root := t.TempDir()
	ownedMarker(t, root)
	huge := append([]byte(`{"session_id":"owner","stop_hook_active":true,"last_assistant_message":"`), bytes.Repeat([]byte("x"), 10<<20)...)
	huge = append(huge, []byte(`"}`)...)
	inputs := map[string][]byte{
		"malformed JSON": []byte(`{"session_id": "owner", `),
		"empty stdin":    nil,
		"10 MB of stdin": huge,
		"invalid UTF-8":  []byte("{\"session_id\":\"owner\",\"last_assistant_message\":\"\xff\xfe\xfd\"}"),
		"not an object":  []byte(`["owner"]`),
		"owner":          []byte(`{"session_id":"owner","stop_hook_active":true}`),
		"bystander":      []byte(`{"session_id":"other","stop_hook_active":true}`),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			out, code := runHookProcess(t, root, in)
			if code != 0 {
				t.Fatalf("exit code %d", code)
			}
			obj := assertEmptyOrOneObject(t, out)
			if name == "owner" && (obj == nil || obj["decision"] != "block") {
				t.Fatalf("owner should be blocked, got %q", out)
			}
			if name != "owner" && name != "invalid UTF-8" && obj != nil {
				t.Fatalf("expected no output, got %q", out)
			}
		})
	}
}

func TestHookProcessCorruptAndSymlinkedMarkerAllow(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	mp := filepath.Join(dir, ".story-automator-active")
	if err := os.WriteFile(mp, []byte(`{"storiesRemaining": 3, `), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runHookProcess(t, root, []byte(`{"session_id":"x"}`)); out != "" || code != 0 {
		t.Fatalf("corrupt marker: %q %d", out, code)
	}
	b, _ := os.ReadFile(mp)
	if string(b) != `{"storiesRemaining": 3, ` {
		t.Fatal("corrupt marker was rewritten")
	}
	os.Remove(mp)
	real := filepath.Join(root, "elsewhere.json")
	if err := os.WriteFile(real, []byte(`{"storiesRemaining":3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, mp); err != nil {
		t.Fatal(err)
	}
	if out, code := runHookProcess(t, root, []byte(`{"session_id":"x"}`)); out != "" || code != 0 {
		t.Fatalf("symlinked marker: %q %d", out, code)
	}
}

func TestHookProcessHonoursMarkerEnvAndMaxBlocks(t *testing.T) {
	root := t.TempDir()
	var out bytes.Buffer
	s := testStreams(root, &out)
	s.Getenv = func(k string) string {
		if k == "STORY_AUTOMATOR_ACTIVE_MARKER" {
			return "run/marker.json"
		}
		return ""
	}
	if code := Run([]string{"marker", "create", "--remaining", "1", "--owner-session", "o"}, s); code != 0 {
		t.Fatalf("create: %s", out.String())
	}
	in := []byte(`{"session_id":"o","stop_hook_active":true}`)
	envs := []string{"STORY_AUTOMATOR_ACTIVE_MARKER=run/marker.json", "STORY_AUTOMATOR_MAX_STOP_BLOCKS=2"}
	first, _ := runHookProcess(t, root, in, envs...)  // progress seen: block, count 0
	second, _ := runHookProcess(t, root, in, envs...) // count 1: block
	third, _ := runHookProcess(t, root, in, envs...)  // count 2 = cap: release
	if !strings.Contains(first, "block") || !strings.Contains(second, "block") || !strings.Contains(third, "circuit breaker") {
		t.Fatalf("sequence: %q / %q / %q", first, second, third)
	}
}

func TestHookFindsTheMarkerAboveItsWorkingDirectory(t *testing.T) {
	root := t.TempDir()
	ownedMarker(t, root)
	sub := filepath.Join(root, "src", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(builtBinary(t), "stop-hook")
	cmd.Dir = sub
	cmd.Env = cleanEnv()
	cmd.Stdin = strings.NewReader(`{"session_id":"owner","stop_hook_active":true}`)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"block"`) {
		t.Fatalf("owner in a subdirectory not guarded: %q %v", out, err)
	}
}

// Whatever goes wrong around the hook — a bad flag, a deleted working
// directory, an unwritable log file — it exits 0 and prints no failure JSON:
// exit 2 from a Stop hook would block the stop.
func TestHookProcessNeverFailsOnItsOwnProblems(t *testing.T) {
	bin := builtBinary(t)
	root := t.TempDir()
	ownedMarker(t, root)
	cases := map[string]struct {
		args    []string
		goneCwd bool
		env     []string
	}{
		"bad log level":      {args: []string{"--log-level", "bogus", "stop-hook"}},
		"unwritable log":     {args: []string{"--log-file", "/nonexistent/dir/log", "stop-hook"}},
		"unknown flag":       {args: []string{"--frobnicate", "stop-hook", "--also-bad"}},
		"deleted cwd":        {args: []string{"stop-hook"}, goneCwd: true},
		"deleted cwd, owner": {args: []string{"stop-hook"}, goneCwd: true, env: []string{"CLAUDE_PROJECT_DIR=" + root}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Dir = root
			if tc.goneCwd {
				// The shell enters a directory, removes it, then becomes the hook.
				gone := filepath.Join(t.TempDir(), "gone")
				if err := os.Mkdir(gone, 0o755); err != nil {
					t.Fatal(err)
				}
				script := `cd "$1" && rmdir "$1" && shift && exec "$@"`
				cmd = exec.Command("sh", append([]string{"-c", script, "sh", gone, bin}, tc.args...)...)
			}
			cmd.Env = cleanEnv(tc.env...)
			cmd.Stdin = strings.NewReader(`{"session_id":"bystander","stop_hook_active":true}`)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("exit: %v (stdout %q)", err, out)
			}
			if len(out) != 0 {
				t.Fatalf("stdout %q", out)
			}
		})
	}
}

func TestStopHookHelpDoesNotWaitForStdin(t *testing.T) {
	var out bytes.Buffer
	s := testStreams(t.TempDir(), &out)
	s.In = blockingReader{}
	if code := Run([]string{"stop-hook", "--help"}, s); code != 0 || !strings.Contains(out.String(), "Always exits 0") {
		t.Fatalf("%d %q", code, out.String())
	}
}

// blockingReader fails the test's purpose loudly if anything reads it.
type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { panic("stop-hook --help read stdin") }
