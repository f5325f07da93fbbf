package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runModelSim runs the built binary's model-sim with args to its end: its
// one JSON line and exit code.
func runModelSim(t *testing.T, bin string, args ...string) (map[string]any, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"model-sim", "--json"}, args...)...)
	cmd.Env = cleanEnv()
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("model-sim %q: stdout %q is not one JSON object", args, out)
	}
	return res, code
}

func TestE2EModelSimRefusesANonLoopbackAddress(t *testing.T) {
	res, code := runModelSim(t, builtBinary(t), "--listen", "0.0.0.0:0")
	if code != 2 || res["error"] != "usage_error" || !strings.Contains(res["message"].(string), "loopback") {
		t.Fatalf("model-sim --listen 0.0.0.0:0 = %d %v", code, res)
	}
	script := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(script, []byte("rules: [{match: x, actions: [{fault: boom}]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res, code := runModelSim(t, builtBinary(t), "--script", script); code != 1 || res["error"] != "model_sim_script" {
		t.Fatalf("a bad script = %d %v", code, res)
	}
}

// The binary prints its URLs as the first line and serves the scripted brain
// until it is told to stop.
func TestE2EModelSimServesItsScript(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(script, []byte("rules:\n  - match: hello\n    actions: [{reply: \"hi there\"}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, stdout := startModelSimCommand(t, "--script", script)
	defer func() {
		// Done is the usual end: the test stops it and waits for it below.
		if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Error(err)
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var urls map[string]any
	if err := json.Unmarshal([]byte(line), &urls); err != nil || urls["ok"] != true {
		t.Fatalf("first line %q: %v", line, err)
	}
	base := urls["url"].(string)
	if !strings.HasPrefix(base, "http://127.0.0.1:") || urls["openaiBaseUrl"] != base+"/v1" || urls["anthropicBaseUrl"] != base {
		t.Fatalf("urls %v", urls)
	}
	resp, err := http.Post(base+"/v1/messages", "application/json", strings.NewReader(
		`{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"text":"hi there"`) {
		t.Errorf("answer %s", body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("model-sim after SIGTERM: %v", err)
	}
}

// model-sim --home writes a private home for an agent CLI and prints the
// environment that points that CLI at the running server.
func TestE2EModelSimWritesAnOfflineHome(t *testing.T) {
	t.Parallel()
	home, proj := t.TempDir(), t.TempDir()
	cmd, stdout := startModelSimCommand(t, "--json", "--home", home, "--home-agent", "claude", "--trust", proj)
	defer func() {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("model-sim ended before the test stopped it: %v", err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("model-sim told to stop: %v", err)
		}
	}()
	var first struct {
		URL string   `json:"url"`
		Env []string `json:"env"`
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &first) != nil {
		t.Fatalf("first line %q: %v", line, err)
	}
	env := strings.Join(first.Env, "\n")
	if !strings.Contains(env, "ANTHROPIC_BASE_URL="+first.URL) || !strings.Contains(env, "HOME="+home) {
		t.Fatalf("env %v, url %s", first.Env, first.URL)
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil || !strings.Contains(string(b), proj) {
		t.Fatalf(".claude.json %s %v", b, err)
	}
}

// startModelSimCommand starts the built binary's model-sim with args, its stdout
// piped to the caller; stopping it is the caller's.
func startModelSimCommand(t *testing.T, args ...string) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(builtBinary(t), append([]string{"model-sim"}, args...)...)
	cmd.Env = cleanEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout
}
