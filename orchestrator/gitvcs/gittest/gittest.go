// Package gittest holds what the tests of gitvcs, and of runs on a real git
// repository, do to one: make it, run git in it, write and read its files.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testtier"
)

// Init makes an empty repository in a temp dir and returns its root; the
// test is skipped without git (failed under CI=true).
func Init(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testtier.Missing(t, "git is not installed")
	}
	root := t.TempDir()
	Git(t, root, "init", "-q")
	return root
}

// Seed makes a repository (see Init) whose first commit holds files
// (project-relative path: content) and returns its root.
func Seed(t *testing.T, files map[string]string) string {
	t.Helper()
	root := Init(t)
	for rel, text := range files {
		Write(t, filepath.Join(root, rel), text)
	}
	Git(t, root, "add", "-A")
	Git(t, root, "commit", "-q", "-m", "init")
	return root
}

// Run runs git in dir with a fixed identity and returns its output.
func Run(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Git is Run that fails the test when git fails.
func Git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := Run(dir, args...)
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return out
}

// Status is `git status --porcelain` with every untracked file, trimmed.
func Status(t *testing.T, root string) string {
	t.Helper()
	return strings.TrimSpace(Git(t, root, "status", "--porcelain", "--untracked-files=all"))
}

// Write writes a file, making its directory.
func Write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Read returns a file's text.
func Read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
