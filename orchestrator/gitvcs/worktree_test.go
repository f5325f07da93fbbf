package gitvcs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

// worktreeProject is a repository with one commit of a ten-line file.
func worktreeProject(t *testing.T) (*Worktrees, string) {
	t.Helper()
	root := gittest.Init(t)
	gittest.Write(t, filepath.Join(root, "f.txt"), "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	gittest.Git(t, root, "add", "f.txt")
	gittest.Git(t, root, "commit", "-q", "-m", "base")
	g := prepared(t, &Git{Root: root})
	return &Worktrees{Project: g, Run: "r1"}, root
}

// storyCommit replaces line n (1-based) of f.txt in dir by text and commits.
func storyCommit(t *testing.T, dir string, n int, text string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[n-1] = text
	gittest.Write(t, filepath.Join(dir, "f.txt"), strings.Join(lines, "\n"))
	gittest.Git(t, dir, "commit", "-q", "-am", "story "+text)
}

func addWorktree(t *testing.T, w *Worktrees, story, base string) string {
	t.Helper()
	dir, err := w.Add(context.Background(), story, base)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// headOf is the commit checked out in dir.
func headOf(t *testing.T, dir string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "HEAD"))
}

// land lands story's branch and returns the commit it made.
func land(t *testing.T, w *Worktrees, story string) string {
	t.Helper()
	sha, err := w.landBranch(context.Background(), story)
	if err != nil {
		t.Fatalf("land %s: %v", story, err)
	}
	return sha
}

func TestWorktreesLandTwoStoriesEditingOneFileInOrder(t *testing.T) {
	t.Parallel()
	w, root := worktreeProject(t)
	ctx := context.Background()
	base := headOf(t, root)
	a, b := addWorktree(t, w, "1-1", base), addWorktree(t, w, "1-2", base)
	if !strings.HasPrefix(a, filepath.Join(root, ".git")) {
		t.Fatalf("worktree %s is not under the project's .git", a)
	}
	storyCommit(t, a, 2, "two")
	storyCommit(t, b, 9, "nine")
	for _, s := range []string{"1-1", "1-2"} {
		land(t, w, s)
		if st := gittest.Git(t, root, "status", "--porcelain"); st != "" {
			t.Fatalf("user's tree not clean after landing %s: %s", s, st)
		}
	}
	if got := gittest.Read(t, filepath.Join(root, "f.txt")); !strings.Contains(got, "two") || !strings.Contains(got, "nine") {
		t.Fatalf("f.txt lacks a story's change:\n%s", got)
	}
	if n := strings.TrimSpace(gittest.Git(t, root, "rev-list", "--count", base+"..HEAD")); n != "2" {
		t.Fatalf("%s commits landed, want one a story", n)
	}
	for _, s := range []string{"1-1", "1-2"} {
		if err := w.Remove(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if list := gittest.Git(t, root, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
	if br := gittest.Git(t, root, "branch", "--list", "story-automator/*"); br != "" {
		t.Fatalf("branches left: %s", br)
	}
}

func TestWorktreesConflictEscalatesAndKeepsTheWorktreeUntilResolved(t *testing.T) {
	t.Parallel()
	w, root := worktreeProject(t)
	ctx := context.Background()
	base := headOf(t, root)
	a, b := addWorktree(t, w, "1-1", base), addWorktree(t, w, "1-2", base)
	storyCommit(t, a, 5, "five-a")
	storyCommit(t, b, 5, "five-b")
	land(t, w, "1-1")
	landed := headOf(t, root)
	_, err := w.landBranch(ctx, "1-2")
	if orchestrator.Code(err) != orchestrator.CodeMergeConflict || !strings.Contains(err.Error(), "f.txt") {
		t.Fatalf("err = %v (%s), want merge_conflict naming f.txt", err, orchestrator.Code(err))
	}
	if head := headOf(t, root); head != landed {
		t.Fatal("the user's branch moved on a conflict")
	}
	if st := gittest.Git(t, root, "status", "--porcelain"); st != "" {
		t.Fatalf("user's tree touched by a conflict: %s", st)
	}
	if _, err := os.Stat(filepath.Join(b, "f.txt")); err != nil {
		t.Fatal("the conflicting story's worktree is gone")
	}
	// The user resolves it in the worktree; landing (on --resume) finishes.
	gittest.Git(t, b, "reset", "-q", "--hard", landed)
	storyCommit(t, b, 6, "six-b")
	land(t, w, "1-2")
	if got := gittest.Read(t, filepath.Join(root, "f.txt")); !strings.Contains(got, "five-a") || !strings.Contains(got, "six-b") {
		t.Fatalf("f.txt:\n%s", got)
	}
}

func TestWorktreesADependentStoryBuildsOnItsDependencysCommit(t *testing.T) {
	t.Parallel()
	w, root := worktreeProject(t)
	base := headOf(t, root)
	a := addWorktree(t, w, "1-1", base)
	storyCommit(t, a, 1, "one")
	sha := land(t, w, "1-1")
	b := addWorktree(t, w, "1-2", sha)
	if got := gittest.Read(t, filepath.Join(b, "f.txt")); !strings.HasPrefix(got, "one\n") {
		t.Fatalf("dependent story does not see its dependency's change:\n%s", got)
	}
}

func TestWorktreesAChildsCheckoutAndStashDisturbNoOtherStory(t *testing.T) {
	t.Parallel()
	w, root := worktreeProject(t)
	base := headOf(t, root)
	a, b := addWorktree(t, w, "1-1", base), addWorktree(t, w, "1-2", base)
	gittest.Write(t, filepath.Join(b, "f.txt"), "b's work in progress\n")
	gittest.Write(t, filepath.Join(a, "f.txt"), "a's scratch\n")
	gittest.Git(t, a, "stash")
	gittest.Git(t, a, "checkout", "-q", "-b", "a-experiment")
	if got := gittest.Read(t, filepath.Join(b, "f.txt")); got != "b's work in progress\n" {
		t.Fatalf("story 1-2's file changed: %q", got)
	}
	if st := gittest.Git(t, root, "status", "--porcelain"); st != "" {
		t.Fatalf("user's tree changed: %s", st)
	}
	if br := strings.TrimSpace(gittest.Git(t, b, "symbolic-ref", "--short", "HEAD")); br != w.Branch("1-2") {
		t.Fatalf("story 1-2 is on %s", br)
	}
}

func TestWorktreesResumeRecreatesAHalfMadeWorktreeAndUndoesAHalfLanding(t *testing.T) {
	t.Parallel()
	w, root := worktreeProject(t)
	ctx := context.Background()
	base := headOf(t, root)
	a := addWorktree(t, w, "1-1", base)
	storyCommit(t, a, 3, "three")
	// Killed in `git worktree add`: the checkout is gone, git's record locked.
	gittest.Git(t, root, "worktree", "lock", "--reason", "initializing", a)
	if err := os.Remove(filepath.Join(a, ".git")); err != nil {
		t.Fatal(err)
	}
	a = addWorktree(t, w, "1-1", base)
	if got := gittest.Read(t, filepath.Join(a, "f.txt")); !strings.Contains(got, "three") {
		t.Fatal("the recreated worktree lost the story's commit")
	}
	// Killed in a landing's rebase: a conflicting rebase is left in progress.
	gittest.Write(t, filepath.Join(root, "f.txt"), "1\n2\nTHREE\n4\n5\n6\n7\n8\n9\n10\n")
	gittest.Git(t, root, "commit", "-q", "-am", "user")
	userTip := headOf(t, root)
	cmd := []string{"rebase", "-q", userTip}
	if out, err := gittest.Run(a, cmd...); err == nil {
		t.Fatalf("rebase should conflict: %s", out)
	}
	_, err := w.landBranch(ctx, "1-1")
	if orchestrator.Code(err) != orchestrator.CodeMergeConflict {
		t.Fatalf("err = %v, want merge_conflict", err)
	}
	if st := gittest.Git(t, a, "status", "--porcelain"); st != "" {
		t.Fatalf("the story's worktree holds a half rebase: %s", st)
	}
	if err := w.Remove(ctx, "1-1"); err != nil {
		t.Fatal(err)
	}
	if list := gittest.Git(t, root, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
	if _, err := os.Stat(filepath.Join(root, ".git", "story-automator")); !os.IsNotExist(err) {
		t.Fatalf("the worktrees' directory is left: %v", err)
	}
}

func TestWorktreesMergeSprintStatusEntriesNotText(t *testing.T) {
	t.Parallel()
	w, root := worktreeProject(t)
	status := "development_status:\n  1-1-a: ready-for-dev\n  1-2-b: ready-for-dev\n"
	gittest.Write(t, filepath.Join(root, "sprint-status.yaml"), status)
	gittest.Git(t, root, "add", "sprint-status.yaml")
	gittest.Git(t, root, "commit", "-q", "-m", "status")
	w.StatusFile = "sprint-status.yaml"
	w.MarkDone = func(dir, story string) error {
		p := filepath.Join(dir, "sprint-status.yaml")
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		key := map[string]string{"1-1": "1-1-a", "1-2": "1-2-b"}[story]
		return os.WriteFile(p, []byte(strings.Replace(string(data), key+": ready-for-dev", key+": done", 1)), 0o644)
	}
	base := headOf(t, root)
	a, b := addWorktree(t, w, "1-1", base), addWorktree(t, w, "1-2", base)
	// Each story's agent moves its own entry on: adjacent lines, which a text merge would refuse.
	for dir, line := range map[string]string{a: "  1-1-a: review\n  1-2-b: ready-for-dev\n", b: "  1-1-a: ready-for-dev\n  1-2-b: review\n"} {
		gittest.Write(t, filepath.Join(dir, "sprint-status.yaml"), "development_status:\n"+line)
	}
	storyCommit(t, a, 2, "two")
	storyCommit(t, b, 9, "nine")
	for _, s := range []string{"1-1", "1-2"} {
		land(t, w, s)
	}
	if got := gittest.Read(t, filepath.Join(root, "sprint-status.yaml")); got != "development_status:\n  1-1-a: done\n  1-2-b: done\n" {
		t.Fatalf("sprint-status.yaml:\n%s", got)
	}
	if n := strings.TrimSpace(gittest.Git(t, root, "rev-list", "--count", base+"..HEAD")); n != "2" {
		t.Fatalf("%s commits landed, want one a story", n)
	}
	if st := gittest.Git(t, root, "status", "--porcelain"); st != "" {
		t.Fatalf("user's tree: %s", st)
	}
}
