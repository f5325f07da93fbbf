package gitvcs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

// The sum of a repository's config and hooks changes when either does (a
// hook planted, a config line added, a hook made a link), and only then;
// with core.hooksPath it sums that folder.
func TestGitFingerprintFollowsConfigAndHooksOnly(t *testing.T) {
	root := gittest.Seed(t, map[string]string{"a.txt": "a\n"})
	g := &Git{Root: root}
	if err := g.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	sum := func() string {
		t.Helper()
		s, err := g.GitFingerprint()
		if err != nil || s == "" {
			t.Fatalf("fingerprint %q, %v", s, err)
		}
		return s
	}
	base := sum()
	gittest.Write(t, filepath.Join(root, "a.txt"), "changed\n")
	gittest.Write(t, filepath.Join(root, "new.txt"), "new\n")
	if sum() != base {
		t.Fatal("a change to the project's files changed the sum")
	}
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	gittest.Write(t, hook, "#!/bin/sh\necho planted\n")
	planted := sum()
	if planted == base {
		t.Fatal("a planted hook left the sum unchanged")
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/bin/true", hook); err != nil {
		t.Fatal(err)
	}
	if s := sum(); s == base || s == planted {
		t.Fatal("a hook made a link left the sum unchanged")
	}
	if err := os.Remove(hook); err != nil {
		t.Fatal(err)
	}
	if sum() != base {
		t.Fatal("the hook's removal did not bring the sum back")
	}
	gittest.Git(t, root, "config", "core.fsmonitor", "touch /tmp/x")
	if sum() == base {
		t.Fatal("a config change left the sum unchanged")
	}

	// A repository whose hooks live in the project (core.hooksPath).
	root2 := gittest.Seed(t, map[string]string{".githooks/pre-commit": "#!/bin/sh\n"})
	gittest.Git(t, root2, "config", "core.hooksPath", ".githooks")
	g2 := &Git{Root: root2}
	if err := g2.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	before, _ := g2.GitFingerprint()
	gittest.Write(t, filepath.Join(root2, ".githooks", "pre-commit"), "#!/bin/sh\ncurl evil\n")
	if after, _ := g2.GitFingerprint(); after == before {
		t.Fatal("a change to a hook under core.hooksPath left the sum unchanged")
	}
}

// The sum covers the other config git reads: config.worktree (the main
// worktree's and each linked worktree's) and the files the config
// includes; the run adding a worktree leaves it unchanged.
func TestGitFingerprintSumsWorktreeConfigAndIncludes(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := gittest.Seed(t, map[string]string{"a.txt": "a\n", "shared.gitconfig": "[core]\n\tx = 1\n"})
	gittest.Git(t, root, "config", "include.path", "../shared.gitconfig")
	g := &Git{Root: root}
	if err := g.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	sum := func() string {
		t.Helper()
		s, err := g.GitFingerprint()
		if err != nil || s == "" {
			t.Fatalf("fingerprint %q, %v", s, err)
		}
		return s
	}
	base := sum()
	w := &Worktrees{Project: g, Run: "r1"}
	addWorktree(t, w, "1-1", headOf(t, root))
	if sum() != base {
		t.Fatal("the run adding a worktree changed the sum")
	}
	common := filepath.Join(root, ".git")
	// Empty, as Claude Code's sandbox leaves config.worktree: git reads nothing from it.
	gittest.Write(t, filepath.Join(common, "config.worktree"), "")
	gittest.Write(t, filepath.Join(common, "worktrees", "1-1", "config.worktree"), "")
	if sum() != base {
		t.Fatal("an empty config.worktree changed the sum")
	}
	for _, f := range []string{filepath.Join(common, "config.worktree"), filepath.Join(common, "worktrees", "1-1", "config.worktree"),
		filepath.Join(root, "shared.gitconfig")} {
		before := sum()
		gittest.Write(t, f, "[core]\n\tfsmonitor = touch /tmp/planted\n")
		if sum() == before {
			t.Errorf("a change to %s left the sum unchanged", f)
		}
	}
}
