package gitvcs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

// hookScript is a hook that notes its name in log.
func hookScript(log, name string) string {
	return "#!/bin/sh\necho " + name + " >> " + log + "\n"
}

func writeHook(t *testing.T, path, text string) {
	t.Helper()
	gittest.Write(t, path, text)
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A child rewrites the pre-commit hook the run's commit would run: husky's
// .husky/pre-commit (a relative core.hooksPath) in its story's worktree, or
// .git/hooks/pre-commit of the project. A confined run's git runs the hook
// as it was at the run's start; with the sandbox off (the control) it runs
// the rewritten one.
func TestTheRunsCommitRunsTheHooksCopiedAtItsStart(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		hooksDir string // relative to the repository's top; "" = .git/hooks
		worktree bool
	}{{"husky in a worktree", ".husky", true}, {"git hooks in the project", "", false}} {
		for _, keep := range []bool{true, false} {
			t.Run(c.name+map[bool]string{true: ", confined", false: ", sandbox off"}[keep], func(t *testing.T) {
				t.Setenv("XDG_CACHE_HOME", t.TempDir())
				root := gittest.Init(t)
				log := filepath.Join(t.TempDir(), "hooks.log")
				hooks := filepath.Join(root, ".git", "hooks")
				if c.hooksDir != "" {
					hooks = filepath.Join(root, c.hooksDir)
					gittest.Git(t, root, "config", "core.hooksPath", c.hooksDir)
				}
				writeHook(t, filepath.Join(hooks, "pre-commit"), hookScript(log, "original"))
				gittest.Write(t, filepath.Join(root, "f.txt"), "1\n")
				gittest.Git(t, root, "add", "-A")
				gittest.Git(t, root, "commit", "-q", "-m", "base")
				if err := os.Remove(log); err != nil {
					t.Fatalf("the hook did not run for the base commit: %v", err)
				}
				g := &Git{Root: root}
				g.KeepHooks(keep)
				if err := g.Prepare(ctx); err != nil {
					t.Fatal(err)
				}
				req := orchestrator.CommitRequest{RunID: "r1", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Paths: []string{"f.txt"}}
				dir := root
				if c.worktree {
					w := &Worktrees{Project: g, Run: "r1"}
					dir = addWorktree(t, w, "1-1", headOf(t, root))
					hooks = filepath.Join(dir, c.hooksDir)
				}
				// The child's doing.
				writeHook(t, filepath.Join(hooks, "pre-commit"), hookScript(log, "rewritten"))
				gittest.Write(t, filepath.Join(dir, "f.txt"), "2\n")
				var err error
				if c.worktree {
					_, err = (&Worktrees{Project: g, Run: "r1"}).Land(ctx, dir, req)
				} else {
					_, err = g.Commit(ctx, req)
				}
				if err != nil {
					t.Fatal(err)
				}
				ran := strings.Fields(gittest.Read(t, log))
				want := "original"
				if !keep {
					want = "rewritten"
				}
				if len(ran) == 0 || ran[0] != want || strings.Contains(strings.Join(ran, " "), map[bool]string{true: "rewritten", false: "original"}[keep]) {
					t.Fatalf("the run's commit ran %v, want %s only", ran, want)
				}
			})
		}
	}
}

// A child rewrites its worktree's .git file to name a git directory of its
// making, whose config names hooks of its own: the run's git refuses the
// worktree (git_tampered) and runs nothing from there; a git that follows
// the file (the control) runs the planted hook.
func TestTheRunsGitInAWorktreeIgnoresARewrittenGitFile(t *testing.T) {
	ctx := context.Background()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	w, root := worktreeProject(t)
	dir := addWorktree(t, w, "1-1", headOf(t, root))
	log := filepath.Join(t.TempDir(), "hooks.log")
	evil := gittest.Init(t)
	writeHook(t, filepath.Join(evil, "evil-hooks", "pre-commit"), hookScript(log, "planted"))
	gittest.Git(t, evil, "config", "core.hooksPath", filepath.Join(evil, "evil-hooks"))
	gittest.Write(t, filepath.Join(dir, ".git"), "gitdir: "+filepath.Join(evil, ".git")+"\n")
	gittest.Write(t, filepath.Join(dir, "f.txt"), "changed\n")

	req := orchestrator.CommitRequest{RunID: "r1", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}}
	_, err := w.Land(ctx, dir, req)
	var b *orchestrator.Blocker
	if !errors.As(err, &b) || b.Code != orchestrator.CodeGitTampered || !errors.Is(err, errWorktreeGit) {
		t.Fatalf("land: %v, want %s", err, orchestrator.CodeGitTampered)
	}
	if _, err := w.Add(ctx, "1-1", headOf(t, root)); !errors.As(err, &b) || b.Code != orchestrator.CodeGitTampered {
		t.Fatalf("add over it: %v, want %s (the worktree kept for a look)", err, orchestrator.CodeGitTampered)
	}
	if _, err := os.Stat(filepath.Join(dir, "f.txt")); err != nil {
		t.Fatalf("the worktree was removed: %v", err)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("a planted hook ran: %v", err)
	}
	// The control: git following the file runs the planted hook.
	_, _ = gittest.Run(dir, "commit", "-q", "--allow-empty", "-m", "x")
	if got := gittest.Read(t, log); !strings.Contains(got, "planted") {
		t.Fatalf("control: the planted hook did not run: %q", got)
	}
}

// Husky 9 points core.hooksPath at .husky/_, whose wrappers run the
// user's .husky/<hook>: the copy takes all of .husky, so the run's commit
// runs the user's hook as it was at the run's start.
func TestTheHooksCopyKeepsHusky9sWrappersWorking(t *testing.T) {
	ctx := context.Background()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := gittest.Init(t)
	log := filepath.Join(t.TempDir(), "hooks.log")
	writeHook(t, filepath.Join(root, ".husky", "_", "pre-commit"), "#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n")
	writeHook(t, filepath.Join(root, ".husky", "_", "h"),
		"#!/bin/sh\nn=$(basename \"$0\")\nd=$(dirname \"$(dirname \"$0\")\")\nexec sh \"$d/$n\"\n")
	writeHook(t, filepath.Join(root, ".husky", "pre-commit"), hookScript(log, "original"))
	gittest.Git(t, root, "config", "core.hooksPath", ".husky/_")
	gittest.Write(t, filepath.Join(root, "f.txt"), "1\n")
	gittest.Git(t, root, "add", "-A")
	gittest.Git(t, root, "commit", "-q", "-m", "base")
	if err := os.Remove(log); err != nil {
		t.Fatalf("husky's wrapper did not run the hook for the base commit: %v", err)
	}
	g := prepared(t, &Git{Root: root})
	w := &Worktrees{Project: g, Run: "r1"}
	dir := addWorktree(t, w, "1-1", headOf(t, root))
	writeHook(t, filepath.Join(dir, ".husky", "pre-commit"), hookScript(log, "rewritten"))
	gittest.Write(t, filepath.Join(dir, "f.txt"), "2\n")
	req := orchestrator.CommitRequest{RunID: "r1", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}}
	if _, err := w.Land(ctx, dir, req); err != nil {
		t.Fatal(err)
	}
	if ran := strings.Fields(gittest.Read(t, log)); len(ran) == 0 || slices.Contains(ran, "rewritten") {
		t.Fatalf("the run's commit ran %v, want the original hook only", ran)
	}
}

// A child working in the project (Codex writes .git there) plants a
// core.fsmonitor command: a confined run's `git status`, which runs after
// the attempt and before the guard's check, does not run it; with the
// sandbox off (the control) it does.
func TestAConfinedRunsGitRunsNoPlantedFsmonitor(t *testing.T) {
	for _, keep := range []bool{true, false} {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		root := gittest.Seed(t, map[string]string{"a.txt": "a\n"})
		g := &Git{Root: root}
		g.KeepHooks(keep)
		if err := g.Prepare(context.Background()); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(t.TempDir(), "fsmonitor.log")
		monitor := filepath.Join(t.TempDir(), "fsmonitor")
		writeHook(t, monitor, hookScript(log, "planted")+"exit 1\n")
		gittest.Git(t, root, "config", "core.fsmonitor", monitor)
		if _, err := g.Snapshot(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(log)
		if keep && err == nil {
			t.Fatal("a confined run's git status ran the planted fsmonitor")
		}
		if !keep && err != nil {
			t.Fatalf("control: with the sandbox off git status should run it: %v", err)
		}
	}
}

// The copies of repositories that are gone are removed at the next run
// start of any repository; a live repository's copy stays.
func TestHooksCopiesOfGoneRepositoriesAreSwept(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	gone := gittest.Init(t)
	live := gittest.Init(t)
	for _, root := range []string{gone, live} {
		if err := (&Git{Root: root}).Prepare(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	copies := func() int {
		es, _ := os.ReadDir(filepath.Join(base, "story-automator", "hooks"))
		return len(es)
	}
	if n := copies(); n != 2 {
		t.Fatalf("%d copies, want one per repository", n)
	}
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	if err := (&Git{Root: live}).Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := copies(); n != 1 {
		t.Fatalf("%d copies after the repository went, want the live one only", n)
	}
}
