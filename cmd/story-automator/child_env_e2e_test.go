package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// A child started in a tmux server that is already running gets the
// spawner's environment, not the server's: a variable set only in the shell
// that spawns (a user's ANTHROPIC_BASE_URL, proxy, PATH) reaches the agent.
func TestE2EAChildGetsTheSpawnersEnvironmentNotTheServers(t *testing.T) {
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
