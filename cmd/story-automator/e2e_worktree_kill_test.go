package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// gitTrap puts a git on PATH that, the first time its arguments hold
// match, says so on a fifo and blocks (before running the real git, or
// after it when after is set), so the test can kill the run right there.
// It returns the PATH to run with and the fifo to read: the trapped
// process writes its pid there. (A git the run starts is in a process group
// of its own, so killing the run's group leaves the trap waiting: the test
// kills it too, as if the machine had gone down.)
func gitTrap(t *testing.T, match string, after bool) (path, started string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	for _, f := range []string{started, release} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	trap := "mkdir " + dir + "/once 2>/dev/null && { echo $$ > " + started + "; read x < " + release + "; }"
	script := "#!/bin/sh\ncase \" $* \" in\n*\" " + match + " \"*)\n"
	if after {
		script += "\t" + real + " \"$@\"; rc=$?\n\t" + trap + "\n\texit $rc ;;\n"
	} else {
		script += "\t" + trap + " ;;\n"
	}
	script += "esac\nexec " + real + " \"$@\"\n"
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH"), started
}

// A run of parallel stories in worktrees is SIGKILLed (its whole process
// group) while it makes a worktree or lands a story: before or after the
// fast-forward of the user's branch, after a story's rebase. The user's
// branch holds whole story commits only; `--resume` finishes the run with
// one commit a story and leaves no worktree, run branch or temp file.
func TestE2EWorktreeRunKilledWhileMakingAWorktreeOrLandingResumesToNothingLeft(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, match string
		after       bool
	}{
		{"before the fast-forward", "merge --ff-only", false},
		{"after the fast-forward", "merge --ff-only", true},
		{"after the rebase", "rebase -q", true},
		{"after worktree add", "worktree add", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := newRunProject(t)
			path, started := gitTrap(t, c.match, c.after)
			run := p.cmd([]string{"PATH=" + path}, append([]string{"run", "--agent", "sim", "--parallel", "2", "--json"}, fast...)...)
			run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			ended := make(chan error, 1)
			go func() { ended <- run.Wait() }()
			reached := make(chan struct{})
			var trapped []byte
			go func() {
				if f, err := os.Open(started); err == nil { // returns once the trap opened it for writing
					trapped, _ = io.ReadAll(f)
					f.Close()
				}
				close(reached)
			}()
			select {
			case <-reached:
			case err := <-ended:
				// Unblock the reader: a fifo opened read-write never waits.
				if f, ferr := os.OpenFile(started, os.O_RDWR, 0); ferr == nil {
					f.Close()
				}
				t.Fatalf("the run ended (%v) without running git %s", err, c.match)
			}
			if err := syscall.Kill(-run.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var exit *exec.ExitError
			if err := <-ended; !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the run was not ended by the kill: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(trapped)))
			if err != nil {
				t.Fatalf("the trap said %q, not its pid", trapped)
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill the trapped git %d: %v", pid, err)
			}
			if dirty := p.git("status", "--porcelain", "--untracked-files=no"); dirty != "" {
				t.Fatalf("the kill left the user's tree half merged:\n%s", dirty)
			}
			p.checkWholeStoryCommits()
			p.resumeToOneCommitAStory()
			p.checkWholeStoryCommits()
			p.checkNothingLeft()
		})
	}
}

// checkWholeStoryCommits checks that the user's branch is a line of commits,
// each the sample's or a whole story's (or a retrospective's).
func (p *runProject) checkWholeStoryCommits() {
	p.t.Helper()
	if merges := p.git("rev-list", "--merges", "HEAD"); merges != "" {
		p.t.Fatalf("merge commits on the user's branch: %s", merges)
	}
	for _, sha := range strings.Fields(p.git("rev-list", "HEAD")) {
		msg := p.git("log", "-1", "--format=%s%n%b", sha)
		if !strings.HasPrefix(msg, "sample") && !strings.Contains(msg, "Story-Automator-Story: ") && !strings.Contains(msg, "retrospective") {
			p.t.Fatalf("commit %s is not a story's:\n%s", sha, msg)
		}
	}
}

// checkNothingLeft checks that no worktree, run branch, lock or temp file
// is left, and the tree is clean.
func (p *runProject) checkNothingLeft() {
	p.t.Helper()
	if list := p.git("worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		p.t.Fatalf("worktrees left:\n%s", list)
	}
	if br := p.git("branch", "--list", "story-automator/*"); br != "" {
		p.t.Fatalf("branches left: %s", br)
	}
	if dirty := p.git("status", "--porcelain", "--untracked-files=all"); dirty != "" {
		p.t.Fatalf("status after the resume:\n%s", dirty)
	}
	if _, err := os.Stat(filepath.Join(p.root, ".git", "story-automator")); !os.IsNotExist(err) {
		p.t.Fatalf("the worktrees' directory is left: %v", err)
	}
	err := filepath.WalkDir(p.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name, rel := d.Name(), strings.TrimPrefix(path, p.root+string(filepath.Separator))
		// The tool's own lock files (flock, kept on purpose) live in its state dirs.
		ownLock := strings.HasSuffix(name, ".lock") && (strings.HasPrefix(rel, ".story-automator/") || strings.HasPrefix(rel, ".claude/"))
		if !ownLock && (strings.HasSuffix(name, ".lock") || strings.Contains(name, ".tmp")) {
			p.t.Errorf("left behind: %s", path)
		}
		return nil
	})
	if err != nil {
		p.t.Fatal(err)
	}
}
