package gitvcs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

// A parked story's work in the project's tree goes to its ref (an edit,
// a new file, a deletion), the tree is left clean of it and of nothing
// else, and `git cherry-pick --no-commit REF` brings it back. A second
// park keeps the first as a parent.
func TestParkKeepsTheStorysPathsOnItsRefAndCleansThem(t *testing.T) {
	t.Parallel()
	root := gittest.Seed(t, map[string]string{"README.md": "hi\n", "src/old.go": "old\n"})
	g := prepared(t, &Git{Root: root, StatePaths: []string{".story-automator/"}})
	ctx := context.Background()
	gittest.Write(t, filepath.Join(root, "README.md"), "hi, parked\n")
	gittest.Write(t, filepath.Join(root, "src", "new.go"), "new\n")
	if err := os.Remove(filepath.Join(root, "src", "old.go")); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, filepath.Join(root, "other.txt"), "another story's\n")
	gittest.Write(t, filepath.Join(root, ".story-automator", "runs", "r1.md"), "state")
	ref := orchestrator.ParkRef("r1", "1-1")
	req := orchestrator.ParkRequest{RunID: "r1", Story: "1-1", Ref: ref, Paths: []string{"README.md", "src/new.go", "src/old.go"},
		Message: "story-automator: parked story 1.1\n"}
	sha, err := g.Park(ctx, req)
	if err != nil || sha == "" {
		t.Fatalf("park %q %v", sha, err)
	}
	if got := strings.TrimSpace(gittest.Git(t, root, "rev-parse", ref)); got != sha {
		t.Fatalf("%s is %s, want %s", ref, got, sha)
	}
	files := strings.Fields(gittest.Git(t, root, "diff", "--name-status", sha+"^", sha))
	if !slices.Equal(files, []string{"M", "README.md", "A", "src/new.go", "D", "src/old.go"}) {
		t.Fatalf("the parked commit holds %v", files)
	}
	if snap, _ := g.Snapshot(ctx); !slices.Equal(snap.Paths(), []string{"other.txt"}) {
		t.Fatalf("left in the tree: %v, want only other.txt", snap.Paths())
	}
	if restored, err := g.Unpark(ctx, ref); err != nil || !restored {
		t.Fatalf("unpark %v %v", restored, err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "src", "new.go")); string(data) != "new\n" {
		t.Fatalf("unpark brought back %q", data)
	}
	if _, err := os.Stat(filepath.Join(root, "src", "old.go")); !os.IsNotExist(err) {
		t.Fatalf("old.go after unpark: %v", err)
	}
	if snap, _ := g.Snapshot(ctx); !slices.Equal(snap.Paths(), []string{"README.md", "other.txt", "src/new.go", "src/old.go"}) {
		t.Fatalf("after unpark the tree has %v", snap.Paths())
	}
	if restored, err := g.Unpark(ctx, ref); err != nil || restored {
		t.Fatalf("a second unpark: %v %v, want the work left as it is", restored, err)
	}

	gittest.Write(t, filepath.Join(root, "README.md"), "hi, parked again\n")
	again, err := g.Park(ctx, orchestrator.ParkRequest{RunID: "r1", Story: "1-1", Ref: ref, Paths: []string{"README.md"}, Message: "again\n"})
	if err != nil || again == "" {
		t.Fatalf("second park %q %v", again, err)
	}
	parents := strings.Fields(gittest.Git(t, root, "log", "-1", "--format=%P", again))
	if len(parents) != 2 || parents[1] != sha {
		t.Fatalf("parents %v: the first park is not kept", parents)
	}
	gittest.Write(t, filepath.Join(root, "README.md"), "someone else's line\n")
	if restored, err := g.Unpark(ctx, ref); err == nil || restored {
		t.Fatalf("unpark over a conflicting change: %v %v, want an error", restored, err)
	}
	if got := gittest.Read(t, filepath.Join(root, "README.md")); got != "someone else's line\n" {
		t.Fatalf("a failed unpark changed README.md: %q", got)
	}
}

// Paths that hold no change park nothing.
func TestParkOfUnchangedPathsMakesNoRef(t *testing.T) {
	t.Parallel()
	root := gittest.Seed(t, map[string]string{"README.md": "hi\n"})
	g := prepared(t, &Git{Root: root})
	ref := orchestrator.ParkRef("r1", "1-1")
	sha, err := g.Park(context.Background(), orchestrator.ParkRequest{Story: "1-1", Ref: ref, Paths: []string{"README.md"}, Message: "m\n"})
	if err != nil || sha != "" {
		t.Fatalf("park %q %v", sha, err)
	}
	if out, err := gittest.Run(root, "rev-parse", "-q", "--verify", ref); err == nil {
		t.Fatalf("%s exists: %s", ref, out)
	}
	if restored, err := g.Unpark(context.Background(), ref); err != nil || restored {
		t.Fatalf("unpark of no ref: %v %v", restored, err)
	}
}

// A story parked in its worktree has its work committed on its branch and
// its ref at the branch's tip; the worktree stays.
func TestParkWorktreeCommitsOnTheStorysBranch(t *testing.T) {
	t.Parallel()
	w, root := worktreeProject(t)
	dir := addWorktree(t, w, "1-1", headOf(t, root))
	gittest.Write(t, filepath.Join(dir, "wip.txt"), "half done\n")
	ref := orchestrator.ParkRef("r1", "1-1")
	sha, err := w.ParkWorktree(context.Background(), dir, orchestrator.ParkRequest{Story: "1-1", Ref: ref, Message: "story-automator: parked story 1.1\n"})
	if err != nil {
		t.Fatal(err)
	}
	if tip := strings.TrimSpace(gittest.Git(t, root, "rev-parse", "refs/heads/"+w.Branch("1-1"))); tip != sha {
		t.Fatalf("branch tip %s, parked %s", tip, sha)
	}
	if got := strings.TrimSpace(gittest.Git(t, root, "rev-parse", ref)); got != sha {
		t.Fatalf("%s is %s", ref, got)
	}
	if files := strings.Fields(gittest.Git(t, root, "show", "--name-only", "--format=", sha)); !slices.Equal(files, []string{"wip.txt"}) {
		t.Fatalf("parked commit holds %v", files)
	}
	if st := gittest.Git(t, dir, "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Fatalf("worktree left dirty: %s", st)
	}
}

// In a project that is a subdirectory of its repository, a park sets a
// tracked file back and removes a new one, and unpark brings both back.
func TestParkInASubdirectoryProject(t *testing.T) {
	t.Parallel()
	repo, root := subdirProject(t)
	g := prepared(t, &Git{Root: root})
	ctx := context.Background()
	gittest.Write(t, filepath.Join(root, "status.yaml"), "a: parked\n")
	gittest.Write(t, filepath.Join(root, "new.txt"), "new\n")
	ref := orchestrator.ParkRef("r1", "1-1")
	sha, err := g.Park(ctx, orchestrator.ParkRequest{Story: "1-1", Ref: ref, Paths: []string{"status.yaml", "new.txt"}, Message: "m\n"})
	if err != nil || sha == "" {
		t.Fatalf("park %q %v", sha, err)
	}
	if st := gittest.Git(t, repo, "status", "--porcelain", "--untracked-files=all"); strings.TrimSpace(st) != "" {
		t.Fatalf("left in the tree:\n%s", st)
	}
	if got := gittest.Read(t, filepath.Join(root, "status.yaml")); got != "a: backlog\n" {
		t.Fatalf("status.yaml %q", got)
	}
	if restored, err := g.Unpark(ctx, ref); err != nil || !restored {
		t.Fatalf("unpark %v %v", restored, err)
	}
	if got := gittest.Read(t, filepath.Join(root, "status.yaml")); got != "a: parked\n" || gittest.Read(t, filepath.Join(root, "new.txt")) != "new\n" {
		t.Fatalf("after unpark status.yaml %q", got)
	}
}
