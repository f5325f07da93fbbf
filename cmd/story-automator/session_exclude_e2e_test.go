package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// A child started on its own (session spawn, as an orchestrating session
// does) gets the project's .git/info/exclude a run's start writes: its
// agent's `git add -A` picks up neither this tool's state nor a name its
// sandbox may plant (Claude Code's /dev/null over an absent .bashrc).
func TestE2ESessionSpawnKeepsStateAndPlantedNamesOutOfGit(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	if out, err := exec.Command("git", "-C", p.root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	p.spawn(nil, "--agent", "sim", "--prompt", "hello")
	b, err := os.ReadFile(filepath.Join(p.root, ".git", "info", "exclude"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/.bashrc", "/.mcp.json", "/.geminiignore", "/.story-automator/sessions/"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf(".git/info/exclude lacks %s:\n%s", want, b)
		}
	}
}
