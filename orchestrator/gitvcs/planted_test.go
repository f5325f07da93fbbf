package gitvcs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

// A sandbox's placeholder (an empty .geminiignore, a .bashrc Claude Code
// mounts over) is neither a change nor in a commit, and an agent's own
// `git add -A` passes it by; a name the user has is never hidden, and the
// block follows what is absent at each run start.
func TestFilesASandboxPlantsStayOutOfGit(t *testing.T) {
	t.Parallel()
	root := gittest.Seed(t, map[string]string{"README.md": "hi\n", ".bashrc": "mine\n"})
	g := prepared(t, &Git{Root: root, Planted: []string{".bashrc", ".geminiignore", ".vscode"}})
	ctx := context.Background()
	exclude := filepath.Join(root, ".git", "info", "exclude")
	data, _ := os.ReadFile(exclude)
	if !strings.Contains(string(data), "/.geminiignore\n") || strings.Contains(string(data), "/.bashrc") {
		t.Fatalf("info/exclude:\n%s", data)
	}
	gittest.Write(t, filepath.Join(root, ".geminiignore"), "")
	gittest.Write(t, filepath.Join(root, ".vscode", "settings.json"), "")
	if snap, err := g.Snapshot(ctx); err != nil || len(snap) != 0 {
		t.Fatalf("planted files counted as a change: %v %v", snap, err)
	}
	gittest.Git(t, root, "add", "-A")
	if staged := gittest.Git(t, root, "diff", "--cached", "--name-only"); staged != "" {
		t.Fatalf("an agent's git add -A staged %q", staged)
	}
	// At the next run start the placeholders are still kept out; a file the
	// user commits (git add -f) is theirs from then on.
	gittest.Git(t, root, "add", "-f", ".vscode/settings.json")
	gittest.Git(t, root, "commit", "-q", "-m", "mine")
	if err := g.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(exclude)
	if !strings.Contains(string(data), "/.geminiignore\n") || strings.Contains(string(data), "/.vscode") ||
		strings.Count(string(data), plantedHeader) != 1 {
		t.Fatalf("info/exclude after a second start:\n%s", data)
	}
}
