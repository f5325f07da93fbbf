package gitvcs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

// preparedGit is a repository with one commit and a prepared Git on it.
func preparedGit(t *testing.T) (*Git, string) {
	t.Helper()
	root := gittest.Seed(t, map[string]string{"README.md": "hi\n"})
	g := &Git{Root: root, StatePaths: []string{".story-automator/", ".claude/.story-automator-active"}, lockGrace: time.Millisecond}
	if err := g.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g, root
}

func TestGitWritersRunInTheirOwnProcessGroup(t *testing.T) {
	t.Parallel()
	g, root := preparedGit(t)
	out := filepath.Join(t.TempDir(), "pgid")
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	gittest.Write(t, hook, "#!/bin/sh\nps -o pgid= -p $$ > "+out+"\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := g.Prepare(context.Background()); err != nil { // the run's copy of the hooks is made at its start
		t.Fatal(err)
	}
	gittest.Write(t, filepath.Join(root, "a.txt"), "a\n")
	if _, err := g.Commit(context.Background(), orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Paths: []string{"a.txt"}}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if own := syscall.Getpgrp(); pgid == 0 || pgid == own {
		t.Fatalf("git committed in the run's process group %d (hook saw %d): a hang-up to the terminal would kill it", own, pgid)
	}
}

func TestRepairWaitsForAGitTheKilledRunLeftRunning(t *testing.T) {
	t.Parallel()
	g, _ := preparedGit(t)
	// A process standing for the killed run's git, recorded as a writer is.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-c", "read x")
	sh.Stdin = r
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer func() { _ = sh.Wait() }()
	start, _ := proc.Start(sh.Process.Pid)
	rec := filepath.Join(g.gitDir, trackDir, strconv.Itoa(sh.Process.Pid))
	gittest.Write(t, rec, strconv.FormatUint(start, 10))
	repaired := make(chan error, 1)
	go func() { repaired <- g.Repair(context.Background()) }()
	select {
	case err := <-repaired:
		t.Fatalf("Repair returned (%v) while the git was still running", err)
	case <-time.After(100 * time.Millisecond): // only ever lets a broken Repair through, never fails a good one
	}
	w.Close() // the git finishes
	if err := <-repaired; err != nil {
		t.Fatal(err)
	}
	if proc.Alive(sh.Process.Pid) {
		t.Fatal("Repair returned before the git ended")
	}
	if _, err := os.Stat(rec); !os.IsNotExist(err) {
		t.Fatalf("the record is left: %v", err)
	}
}

func TestRepairRemovesTheRunsStaleIndexLockAndCommitsGoOn(t *testing.T) {
	t.Parallel()
	g, root := preparedGit(t)
	gittest.Write(t, filepath.Join(g.gitDir, privateIndex+".lock"), "")
	gittest.Write(t, filepath.Join(g.gitDir, privateIndex), "half")
	if err := g.Repair(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{privateIndex + ".lock", privateIndex} {
		if _, err := os.Stat(filepath.Join(g.gitDir, n)); !os.IsNotExist(err) {
			t.Fatalf("%s left: %v", n, err)
		}
	}
	gittest.Write(t, filepath.Join(root, "a.txt"), "a\n")
	if _, err := g.Commit(context.Background(), orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Paths: []string{"a.txt"}}); err != nil {
		t.Fatal(err)
	}
	if s := gittest.Status(t, root); s != "" {
		t.Fatalf("status after the commit:\n%s", s)
	}
}

func TestTheUsersIndexLockIsNeverRemovedAndBlocksAtOnce(t *testing.T) {
	t.Parallel()
	g, root := preparedGit(t)
	lock := filepath.Join(g.gitDir, "index.lock")
	gittest.Write(t, lock, "")
	err := g.Repair(context.Background())
	b, ok := orchestrator.AsBlocker(err)
	if !ok || b.Code != "git_index_locked" || !strings.Contains(b.Error(), lock) || !strings.Contains(b.Action, "remove "+lock) {
		t.Fatalf("Repair = %v (%+v)", err, b)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the user's index.lock was removed: %v", err)
	}
	// The same cause met by a commit is a blocker too, not a retryable failure.
	gittest.Write(t, filepath.Join(root, "a.txt"), "a\n")
	_, err = g.Commit(context.Background(), orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Paths: []string{"a.txt"}})
	if b, ok := orchestrator.AsBlocker(err); !ok || b.Code != "git_index_locked" {
		t.Fatalf("commit with a locked index: %v", err)
	}
}

func TestCommitFailuresNoRetryChangesAreBlockers(t *testing.T) {
	cases := []struct {
		name, code string
		setup      func(t *testing.T, root string)
	}{
		{"missing identity", "git_identity_missing", func(t *testing.T, root string) {
			gittest.Git(t, root, "config", "user.email", "me@example.com")
			gittest.Git(t, root, "config", "user.name", "")
		}},
		{"rejecting hook", "git_hook_rejected", func(t *testing.T, root string) {
			hook := filepath.Join(root, ".git", "hooks", "pre-commit")
			gittest.Write(t, hook, "#!/bin/sh\necho 'lint failed' >&2\nexit 1\n")
			if err := os.Chmod(hook, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := gittest.Seed(t, map[string]string{"README.md": "hi\n"})
			tc.setup(t, root)
			g := &Git{Root: root}
			t.Setenv("GIT_AUTHOR_NAME", "")
			t.Setenv("GIT_COMMITTER_NAME", "")
			os.Unsetenv("GIT_AUTHOR_NAME")
			os.Unsetenv("GIT_COMMITTER_NAME")
			t.Setenv("HOME", t.TempDir())
			if err := g.Prepare(context.Background()); err != nil {
				t.Fatal(err)
			}
			gittest.Write(t, filepath.Join(root, "a.txt"), "a\n")
			_, err := g.Commit(context.Background(), orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Paths: []string{"a.txt"}})
			if b, ok := orchestrator.AsBlocker(err); !ok || b.Code != tc.code || b.Action == "" {
				t.Fatalf("commit: %v, want a %s blocker", err, tc.code)
			}
		})
	}
}

// killedGit stands for a SIGKILL of the run between `git commit` and the
// reset of the user's index.
type killedGit struct{}

// A run killed between its `git commit` and the reset of the user's index
// leaves the index behind HEAD: the resumed run finds its commit and
// SyncIndex brings the index in step, leaving a clean status.
func TestAKillBetweenGitCommitAndTheIndexResetIsMendedBySyncIndex(t *testing.T) {
	t.Parallel()
	g, root := preparedGit(t)
	ctx := context.Background()
	gittest.Write(t, filepath.Join(root, "docs", "1-1-story.md"), "# Story 1.1\n")
	req := orchestrator.CommitRequest{RunID: "run-x", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Paths: []string{"docs/1-1-story.md"}}
	g.afterGitCommit = func() { panic(killedGit{}) }
	func() {
		defer func() {
			if r := recover(); r != (killedGit{}) {
				t.Fatalf("recovered %v", r)
			}
		}()
		_, _ = g.Commit(ctx, req)
	}()
	g.afterGitCommit = nil
	if s := gittest.Status(t, root); s == "" {
		t.Fatal("the kill left the index in step: the test kills too late")
	}
	sha, found, err := g.Find(ctx, req)
	if err != nil || !found {
		t.Fatalf("the killed run's commit was not found: %v", err)
	}
	if err := g.SyncIndex(ctx, sha); err != nil {
		t.Fatal(err)
	}
	if s := gittest.Status(t, root); s != "" {
		t.Fatalf("git status after SyncIndex:\n%s", s)
	}
}
