package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/testing/testbin"
)

// runOnTerminal runs a command in-process as if stdout were a person's terminal.
func runOnTerminal(t *testing.T, root string, args ...string) (string, int) {
	t.Helper()
	out, _, code := runStreams(t, root, true, args...)
	return out, code
}

func runStreams(t *testing.T, root string, terminal bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	s := testStreams(root, &out)
	s.Err = &errb
	if terminal {
		s.OutTerminal = func() (int, bool) { return -1, true }
	}
	socket := fmt.Sprintf("sa-test-none-%d", os.Getpid())
	code = Run(append([]string{"--project-root", root, "--tmux-socket", socket}, args...), s)
	return out.String(), errb.String(), code
}

func TestATerminalGetsTextAndAPipeGetsJSON(t *testing.T) {
	root := t.TempDir()
	if _, _, code := runStreams(t, root, false, "marker", "create", "--epic", "1", "--story", "1.1", "--remaining", "2"); code != 0 {
		t.Fatal("marker create failed")
	}
	piped, _, _ := runStreams(t, root, false, "marker", "show")
	var res map[string]any
	if err := json.Unmarshal([]byte(piped), &res); err != nil || res["exists"] != true {
		t.Fatalf("piped output is not the JSON: %q", piped)
	}
	text, _, code := runStreams(t, root, true, "marker", "show")
	if code != 0 || strings.Contains(text, "{") || !strings.Contains(text, "Exists: yes") || !strings.Contains(text, "Stories remaining: 2") {
		t.Fatalf("terminal output:\n%s", text)
	}
	forced, _, _ := runStreams(t, root, true, "marker", "show", "--json")
	if err := json.Unmarshal([]byte(forced), &res); err != nil {
		t.Fatalf("--json on a terminal: %q", forced)
	}
}

func TestErrorsOnATerminalGoToStderrWithCodeAndAction(t *testing.T) {
	out, errText, code := runStreams(t, t.TempDir(), true, "--project-root", "/nonexistent", "status")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errText, "(project_root_missing)") || !strings.Contains(errText, "→ pass --project-root") {
		t.Fatalf("stderr %q", errText)
	}
	out, errText, code = runStreams(t, t.TempDir(), false, "--project-root", "/nonexistent", "status")
	if code != 1 || !strings.Contains(out, `"error":"project_root_missing"`) || errText != "" {
		t.Fatalf("piped: exit %d, stdout %q, stderr %q", code, out, errText)
	}
}

func TestUsageErrorsExitTwoAndNameTheFlag(t *testing.T) {
	root := t.TempDir()
	out, errText, code := runStreams(t, root, false, "monitor-session", "x", "--timeout", "soon")
	if code != 2 || !strings.Contains(out, `"error":"usage_error"`) || !strings.Contains(errText, `--timeout "soon" is not a duration`) || !strings.Contains(errText, "90s") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errText)
	}
	out, errText, code = runStreams(t, root, true, "loop", "frobnicate")
	if code != 2 || out != "" || !strings.Contains(errText, "unknown loop command") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errText)
	}
}

func TestHelpVersionGroupsAndCompletionExitZero(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "loop"}, {"--version"}, {"loop"}, {"marker"}, {"hooks"}, {"session"},
		{"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}} {
		out, errText, code := runStreams(t, root, false, args...)
		if code != 0 || out == "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errText)
		}
	}
	out, _, _ := runStreams(t, root, false, "marker")
	for _, sub := range []string{"create", "heartbeat", "show", "pause", "resume", "claim", "remove"} {
		if !strings.Contains(out, sub) {
			t.Fatalf("bare marker does not list %s:\n%s", sub, out)
		}
	}
	out, _, _ = runStreams(t, root, false, "--version")
	if !strings.HasPrefix(out, "story-automator ") {
		t.Fatalf("--version: %q", out)
	}
	if _, _, code := runStreams(t, root, false, "completion", "tcsh"); code != 2 {
		t.Fatalf("completion tcsh: exit %d", code)
	}
}

func TestBashCompletionScriptParses(t *testing.T) {
	out, _, _ := runStreams(t, t.TempDir(), false, "completion", "bash")
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v %s", err, msg)
	}
	if !strings.Contains(out, `"loop start") words="--max-iterations`) || !strings.Contains(out, `"hooks status") words="--json"`) {
		t.Fatalf("no loop start or hooks status completions:\n%s", out)
	}
}

func TestEveryFlagIsDescribed(t *testing.T) {
	app := newApp(testStreams(t.TempDir(), &bytes.Buffer{}))
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				if d, ok := f.(interface{ GetUsage() string }); !ok || d.GetUsage() == "" {
					t.Errorf("%s %s: flag --%s has no description", path, c.Name, f.Names()[0])
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("story-automator", app.Commands)
}

// The real binary on a real pty prints text; the same binary piped prints JSON
// and no escape code.
func TestTheBinaryOnAPtyPrintsTextAndPipedPrintsJSON(t *testing.T) {
	bin := testbin.Path(t)
	root := t.TempDir()
	cmd := exec.Command(bin, "--project-root", root, "marker", "show")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(tty) // EIO once the child exits and the pty closes
	_ = cmd.Wait()
	tty.Close()
	if !strings.Contains(string(text), "Exists: no") || strings.Contains(string(text), `"ok"`) {
		t.Fatalf("on a pty: %q", text)
	}
	piped, err := exec.Command(bin, "--project-root", root, "marker", "show").Output()
	if err != nil || !strings.HasPrefix(string(piped), `{"`) || bytes.Contains(piped, []byte("\x1b")) {
		t.Fatalf("piped: %q %v", piped, err)
	}
	cmd = exec.Command(bin, "--project-root", "/nonexistent", "status")
	tty, err = pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	text, _ = io.ReadAll(tty)
	err = cmd.Wait()
	tty.Close()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(text), "(project_root_missing)") {
		t.Fatalf("missing root on a pty: exit %d %v %q", code, err, text)
	}
}

// hooks status on a terminal is a table, one row per settings file, with a
// note where something needs doing; piped it stays the JSON.
func TestHooksStatusOnATerminalIsATable(t *testing.T) {
	f := newHooksFixture(t)
	f.write(t, ".claude/settings.json", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/nowhere/story-automator stop-hook","timeout":30}]}]}}`)
	var out bytes.Buffer
	s := testStreams(f.root, &out)
	s.Getenv = func(k string) string { return f.env[k] }
	s.Exe = func() (string, error) { return f.exe, nil }
	s.OutTerminal = func() (int, bool) { return -1, true }
	if code := Run([]string{"hooks", "status"}, s); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	text := out.String()
	if strings.Contains(text, "{") || !strings.Contains(text, "PROVIDER  SCOPE") {
		t.Fatalf("terminal output:\n%s", text)
	}
	var row string
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "claude" && f[1] == "project" {
			row = l
		}
	}
	if !strings.Contains(row, "yes") || !strings.Contains(row, "its binary is missing") {
		t.Fatalf("the project row %q does not say the hook is there with a missing binary:\n%s", row, text)
	}
	if res, _ := f.run(t, "hooks", "status"); res["installed"] != true {
		t.Fatalf("piped: %v", res)
	}
}

// Every command a person reads on a terminal prints text there, never the
// JSON object: each of these is run on a pretend terminal in an empty project.
func TestCommandsPrintTextOnATerminal(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{
		{"marker", "create", "--epic", "1", "--story", "1.1", "--remaining", "2"},
		{"marker", "show"},
		{"marker", "heartbeat", "--story", "1.1", "--step", "dev"},
		{"marker", "pause", "--reason", "lunch"},
		{"marker", "resume"},
		{"marker", "remove"},
		{"session", "list"},
		{"loop", "status"},
		{"status"},
		{"runs"},
		{"skill", "show"},
		{"verify", "create", "1.1"},
		{"--version"},
	} {
		out, stderr, _ := runStreams(t, root, true, args...)
		text := strings.TrimSpace(out + stderr)
		if text == "" || strings.HasPrefix(text, "{") || strings.Contains(text, `"ok":`) {
			t.Errorf("%v on a terminal printed:\n%s", args, text)
		}
	}
}
