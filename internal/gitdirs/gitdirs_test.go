package gitdirs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A worktree's own git directory and, of the common one, what a commit
// writes; the files that make git run code or point it elsewhere are
// guarded: all of them in a whole .git, the worktree's own in a worktree.
func TestWritableAndGuardedOfARepositoryAndAWorktree(t *testing.T) {
	root := t.TempDir()
	common := filepath.Join(root, ".git")
	wtGit := filepath.Join(common, "worktrees", "s1")
	wt := filepath.Join(root, "wt")
	for _, d := range []string{wtGit, wt, filepath.Join(common, "objects"), filepath.Join(common, "refs"), filepath.Join(common, "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wtGit, "commondir"), []byte("../..\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+wtGit+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Writable(wt); !slices.Equal(got, []string{filepath.Join(common, "objects"), filepath.Join(common, "refs"), wtGit}) {
		t.Fatalf("worktree writable: %q", got)
	}
	if got := Guarded(wt); !slices.Equal(got, []string{filepath.Join(wtGit, "config.worktree"),
		filepath.Join(wtGit, "commondir"), filepath.Join(wtGit, "gitdir")}) {
		t.Fatalf("worktree guarded: %q", got)
	}
	if got := Writable(root); !slices.Equal(got, []string{common}) {
		t.Fatalf("repository writable: %q", got)
	}
	if got := Guarded(root); !slices.Equal(got, []string{filepath.Join(common, "config"), filepath.Join(common, "config.worktree"),
		filepath.Join(common, "hooks"), filepath.Join(common, "worktrees")}) {
		t.Fatalf("repository guarded: %q", got)
	}
	if Writable(t.TempDir()) != nil || Guarded(t.TempDir()) != nil {
		t.Fatal("outside a checkout: something named")
	}
}
