package stophook

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository with one commit and returns its root.
func gitRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	gitRun(t, root, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(root, "a.txt"), "one\n")
	gitRun(t, root, "add", "a.txt")
	gitRun(t, root, "commit", "-q", "-m", "first")
	return root
}

func gitRun(t *testing.T, root string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGitFingerprintCheapSeesCommitsAndStagingOnly(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t)
	fp := func() string { return GitFingerprint(ctx, root, false) }
	first := fp()
	if !strings.HasPrefix(first, "g3:") || first != fp() {
		t.Fatalf("fingerprint %q is not stable", first)
	}
	writeFile(t, filepath.Join(root, "a.txt"), "two\n")
	if fp() != first {
		t.Fatal("the cheap fingerprint must not run git, so an unstaged edit is invisible to it")
	}
	gitRun(t, root, "add", "a.txt")
	staged := fp()
	if staged == first {
		t.Fatal("a staged change must change the fingerprint")
	}
	gitRun(t, root, "commit", "-q", "-m", "second")
	if committed := fp(); committed == staged || committed == first {
		t.Fatal("a commit must change the fingerprint")
	}
	sub := filepath.Join(root, "sub", "dir")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if GitFingerprint(ctx, sub, false) != fp() {
		t.Error("a project root below the repository root must find the repository")
	}
}

func TestGitFingerprintWorkTreeSeesEdits(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t)
	fp := func() string { return GitFingerprint(ctx, root, true) }
	first := fp()
	if !strings.HasPrefix(first, "g4:") || first != fp() {
		t.Fatalf("fingerprint %q is not stable", first)
	}
	writeFile(t, filepath.Join(root, "a.txt"), "two\n")
	edited := fp()
	if edited == first {
		t.Fatal("an unstaged edit must change the work-tree fingerprint")
	}
	writeFile(t, filepath.Join(root, "a.txt"), "three\n")
	again := fp()
	if again == edited {
		t.Fatal("editing an already modified file must change it again")
	}
	writeFile(t, filepath.Join(root, "new.txt"), "x\n")
	if fp() == again {
		t.Fatal("an untracked file must change it")
	}
}

func TestGitFingerprintPackedRefsAndOutsideGit(t *testing.T) {
	ctx := context.Background()
	root := gitRepo(t)
	before := GitFingerprint(ctx, root, false)
	gitRun(t, root, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(root, ".git", "refs", "heads", "main")); err == nil {
		t.Skip("git kept the loose ref")
	}
	if after := GitFingerprint(ctx, root, false); after != before {
		t.Fatalf("packing refs changed the fingerprint: %s -> %s", before, after)
	}
	outside := t.TempDir()
	if _, inRepo := findGitDir(outside); !inRepo {
		if fp := GitFingerprint(ctx, outside, true); fp != "" {
			t.Fatalf("outside a repository: %q", fp)
		}
	}
}
