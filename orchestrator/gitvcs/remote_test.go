package gitvcs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

// A story's work goes to a host as WorkCommit's commit, which changes
// nothing where it is made; the work that comes back is held by another
// worktree on the same base as its uncommitted changes (HoldTree).
func TestWorkCommitThenHoldTreeCarryTheWork(t *testing.T) {
	ctx := context.Background()
	root := gittest.Seed(t, map[string]string{"keep.txt": "k\n", "edit.txt": "1\n", "gone.txt": "g\n", "sub/a.txt": "a\n"})
	base := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD"))
	if sha, err := WorkCommit(ctx, filepath.Join(root, "sub")); err != nil || sha != base {
		t.Fatalf("a clean worktree's work commit = %s, %v; want HEAD %s", sha, err, base)
	}
	gittest.Write(t, filepath.Join(root, "edit.txt"), "2\n")
	gittest.Write(t, filepath.Join(root, "new.txt"), "n\n")
	if err := os.Remove(filepath.Join(root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	before := gittest.Status(t, root)
	sha, err := WorkCommit(ctx, filepath.Join(root, "sub"))
	if err != nil || sha == base {
		t.Fatalf("work commit %s, %v", sha, err)
	}
	if got := gittest.Status(t, root); got != before || strings.TrimSpace(gittest.Git(t, root, "rev-parse", "HEAD")) != base {
		t.Fatalf("WorkCommit changed the worktree: status %q, was %q", got, before)
	}
	if files := gittest.Git(t, root, "ls-tree", "-r", "--name-only", sha); files != "edit.txt\nkeep.txt\nnew.txt\nsub/a.txt\n" {
		t.Fatalf("work commit holds %q", files)
	}

	other := filepath.Join(t.TempDir(), "wt")
	gittest.Git(t, root, "worktree", "add", "-q", "--detach", other, base)
	gittest.Write(t, filepath.Join(other, "untracked.txt"), "u\n")
	if err := HoldTree(ctx, filepath.Join(other, "sub"), sha); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"edit.txt": "2\n", "new.txt": "n\n", "keep.txt": "k\n", "untracked.txt": "u\n"} {
		if got := gittest.Read(t, filepath.Join(other, p)); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(other, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("gone.txt is still there: %v", err)
	}
	if head := strings.TrimSpace(gittest.Git(t, other, "rev-parse", "HEAD")); head != base {
		t.Errorf("HoldTree moved HEAD to %s", head)
	}
	if st := gittest.Status(t, other); !strings.Contains(st, "M  edit.txt") || !strings.Contains(st, "D  gone.txt") || !strings.Contains(st, "A  new.txt") {
		t.Errorf("status after HoldTree:\n%s", st)
	}
}
