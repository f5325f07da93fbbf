package main

import (
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
// that spawns (a user's ANTHROPIC_BASE_URL, proxy, PATH) reaches the agent.
func TestE2EAChildGetsTheSpawnersEnvironmentNotTheServers(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	first := p.spawn(nil, "--agent", "custom", "--command", "sh -c 'printf %s \"${SA_TEST_SETTING-unset}\" > first.out'")
	if res, code := p.run(nil, "monitor-session", first, "--timeout", "30s"); code != 0 {
		t.Fatalf("first child: %d %v", code, res)
	}
	// The server now runs with the first spawner's environment, which lacks the variable.
	second := p.spawn([]string{"SA_TEST_SETTING=from the spawner", "ANTHROPIC_BASE_URL=http://127.0.0.1:9"},
		"--agent", "custom", "--command", "sh -c 'printf %s \"$SA_TEST_SETTING|$ANTHROPIC_BASE_URL\" > second.out'")
	if res, code := p.run(nil, "monitor-session", second, "--timeout", "30s"); code != 0 {
		t.Fatalf("second child: %d %v", code, res)
	}
	first1, _ := os.ReadFile(filepath.Join(p.root, "first.out"))
	got, _ := os.ReadFile(filepath.Join(p.root, "second.out"))
	if string(first1) != "unset" || strings.TrimSpace(string(got)) != "from the spawner|http://127.0.0.1:9" {
		t.Fatalf("first child saw %q, second %q", first1, got)
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
