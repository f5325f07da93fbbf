package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// A child started in a tmux server that is already running gets the
// spawner's environment, not the server's: a variable set only in the shell
// that spawns (a user's proxy, PATH, a name env.pass adds) reaches the agent.
func TestE2EAChildGetsTheSpawnersEnvironmentNotTheServers(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	writePolicy(t, p.root, "env: {pass: [SA_TEST_SETTING]}\n")
	first := p.spawn(nil, "--agent", "custom", "--command", "sh -c 'printf %s \"${SA_TEST_SETTING-unset}\" > first.out'")
	if res, code := p.run(nil, "monitor-session", first, "--timeout", "30s"); code != 0 {
		t.Fatalf("first child: %d %v", code, res)
	}
	// The server now runs with the first spawner's environment, which lacks the variable.
	second := p.spawn([]string{"SA_TEST_SETTING=from the spawner", "https_proxy=http://127.0.0.1:9"},
		"--agent", "custom", "--command", "sh -c 'printf %s \"$SA_TEST_SETTING|$https_proxy\" > second.out'")
	if res, code := p.run(nil, "monitor-session", second, "--timeout", "30s"); code != 0 {
		t.Fatalf("second child: %d %v", code, res)
	}
	first1, _ := os.ReadFile(filepath.Join(p.root, "first.out"))
	got, _ := os.ReadFile(filepath.Join(p.root, "second.out"))
	if string(first1) != "unset" || strings.TrimSpace(string(got)) != "from the spawner|http://127.0.0.1:9" {
		t.Fatalf("first child saw %q, second %q", first1, got)
	}
}

// A child starts from the allow-list: a secret in the spawner's
// environment, the variable a notify webhook names, and SSH_AUTH_SOCK are
// absent in the child, while PATH, the agent's own key, this tool's
// variables and a name env.pass adds are there. A notify variable in
// env.pass is refused before any child starts.
func TestE2EAChildGetsOnlyTheAllowListAndEnvPass(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	writePolicy(t, p.root, "env: {pass: [SA_PASSED]}\nnotify:\n  webhook: http://127.0.0.1:9/$SA_HOOK_TOPIC\n")
	env := []string{"SA_PASSED=passed-value", "SA_HOOK_TOPIC=hook-topic-value", "SA_UNLISTED=unlisted-value",
		"SSH_AUTH_SOCK=/run/agent.sock", "ANTHROPIC_API_KEY=own-key-value"}
	name := p.spawn(env, "--agent", "custom", "--command", "sh -c 'env > child.env'")
	if res, code := p.run(nil, "monitor-session", name, "--timeout", "30s"); code != 0 {
		t.Fatalf("child: %d %v", code, res)
	}
	b, err := os.ReadFile(filepath.Join(p.root, "child.env"))
	got := string(b)
	// The positive signal: the child's environment was written, with what it must hold.
	for _, want := range []string{"SA_PASSED=passed-value", "ANTHROPIC_API_KEY=own-key-value", "STORY_AUTOMATOR_SESSION=" + name, "\nPATH="} {
		if err != nil || !strings.Contains("\n"+got, want) {
			t.Fatalf("the child's environment lacks %q (%v):\n%s", want, err, got)
		}
	}
	for _, gone := range []string{"hook-topic-value", "unlisted-value", "SSH_AUTH_SOCK"} {
		if strings.Contains(got, gone) {
			t.Errorf("%s reached the child:\n%s", gone, got)
		}
	}
	writePolicy(t, p.root, "env: {pass: [SA_HOOK_TOPIC]}\nnotify:\n  webhook: http://127.0.0.1:9/$SA_HOOK_TOPIC\n")
	res, code := p.run(env, "session", "spawn", "--step", "dev", "--story", "1.2", "--agent", "custom", "--command", "true")
	if code == 0 || !strings.Contains(fmt.Sprint(res["message"]), "SA_HOOK_TOPIC is named by notify") {
		t.Fatalf("a notify variable in env.pass: exit %d %v, want it refused", code, res)
	}
}

// writePolicy writes the project's workflow.yaml.
func writePolicy(t *testing.T, root, body string) {
	t.Helper()
	dir := filepath.Join(root, ".story-automator")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "workflow.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A session whose runner was SIGKILLed is settled once as "lost" by the next
// reader (session status, session list, status, the monitor), never left
// "running" forever.
func TestE2EASessionWhoseRunnerWasKilledIsSettledLost(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	name := p.spawn(nil, "--agent", "custom", "--command", "sleep 30")
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		if st, err := sessionstate.Read(p.sessionsDir, name); err == nil && st.AgentPid > 0 {
			pid = st.PanePid
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the runner never reported")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for proc.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	res, code := p.run(nil, "session", "status", name)
	if code != 0 || res["lifecycle"] != sessionstate.LifecycleLost {
		t.Fatalf("session status: %d %v", code, res)
	}
	st, err := sessionstate.Read(p.sessionsDir, name)
	if err != nil || st.Lifecycle != sessionstate.LifecycleLost || st.ExitedAt == "" {
		t.Fatalf("state file not settled: %+v %v", st, err)
	}
}
