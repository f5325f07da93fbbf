package gitvcs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/orchestrator"
)

// A git that writes (index, refs, objects) must never be cut in half: it
// runs in its own process group, so a hang-up or a kill of the terminal's
// group leaves it to finish, and it is recorded under the git directory
// (one file per process, named by its pid, holding its start time) until it
// ends, so a resumed run can wait for it before it touches the index.

// trackDir is the directory, inside the git directory, of the records of
// the git processes a run has running.
const trackDir = "story-automator-git"

// privateIndex is the name, inside the git directory, of the index a
// story's commit is built in.
const privateIndex = "story-automator-index"

// writers are the git subcommands that write to the repository.
var writers = map[string]bool{"read-tree": true, "add": true, "hash-object": true, "update-index": true,
	"commit": true, "commit-tree": true, "update-ref": true, "reset": true, "write-tree": true}

// startGit starts cmd in its own process group and, for a writer, records it
// until wait returns.
func (g *Git) startGit(cmd *exec.Cmd, sub string) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	var record string
	if writers[sub] && g.gitDir != "" {
		record = filepath.Join(g.gitDir, trackDir, strconv.Itoa(cmd.Process.Pid))
		if start, ok := proc.Start(cmd.Process.Pid); ok {
			// No fsync: the record only has to outlive this process, not the machine.
			if os.MkdirAll(filepath.Dir(record), 0o700) != nil ||
				os.WriteFile(record, []byte(strconv.FormatUint(start, 10)), 0o600) != nil {
				record = ""
			}
		} else {
			record = ""
		}
	}
	err := cmd.Wait()
	if record != "" {
		_ = os.Remove(record)
	}
	return err
}

// waitForGits waits for every recorded git process still running (a killed
// run's commit finishing on its own), then drops the records.
func (g *Git) waitForGits(ctx context.Context) error {
	dir := filepath.Join(g.gitDir, trackDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil //nolint:nilerr // nothing recorded
	}
	deadline := time.Now().Add(commitTimeout)
	for _, e := range entries {
		pid, perr := strconv.Atoi(e.Name())
		data, rerr := os.ReadFile(filepath.Join(dir, e.Name()))
		start, serr := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
		for perr == nil && rerr == nil && serr == nil && proc.Is(pid, start) {
			if time.Now().After(deadline) {
				return fmt.Errorf("git process %d is still running in %s after %s", pid, g.Root, commitTimeout)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
	return nil
}

// indexLockGrace is how long a run waits for someone else's git to release
// the index before it refuses to start.
const indexLockGrace = 2 * time.Second

// Repair makes the repository fit for a run; the caller holds the run lock,
// so every file of the run's own is its to repair. It waits for a git a
// killed run left running, removes the run's private index and its stale
// lock (each commit rebuilds that index from HEAD), and refuses with
// ErrGitIndexLocked when the user's index is locked: that lock is never ours
// to delete.
func (g *Git) Repair(ctx context.Context) error {
	if g.gitDir == "" {
		if err := g.Prepare(ctx); err != nil {
			return err
		}
	}
	if err := g.waitForGits(ctx); err != nil {
		return err
	}
	for _, name := range []string{privateIndex + ".lock", privateIndex} {
		if err := os.Remove(filepath.Join(g.gitDir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the run's private index: %w", err)
		}
	}
	lock := filepath.Join(g.gitDir, "index.lock")
	grace := indexLockGrace
	if g.lockGrace > 0 {
		grace = g.lockGrace
	}
	deadline := time.Now().Add(grace)
	for {
		if _, err := os.Lstat(lock); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return indexLocked(lock)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// indexLocked is the blocker of a locked user index.
func indexLocked(lock string) *orchestrator.Blocker {
	return &orchestrator.Blocker{Code: "git_index_locked", Err: fmt.Errorf("%w: %s exists", orchestrator.ErrGitIndexLocked, lock),
		Action: fmt.Sprintf("Check that no git command is running in this repository, then remove %s and run `story-automator run --resume`.", lock)}
}

// classify turns a failed git command into a Blocker when its cause is one
// no retry can change: a locked index, a missing identity, a hook that
// rejected the commit. Anything else is returned as it is.
func (g *Git) classify(ctx context.Context, sub, stderr string, err error) error {
	low := strings.ToLower(stderr)
	switch {
	case strings.Contains(stderr, ".lock': File exists"):
		lock := stderr
		if i := strings.Index(lock, "Unable to create '"); i >= 0 {
			lock = lock[i+len("Unable to create '"):]
		}
		lock = lock[:strings.Index(lock, "': File exists")]
		if filepath.Base(lock) == privateIndex+".lock" {
			return err // ours: the next attempt starts by removing it
		}
		b := indexLocked(lock)
		b.Err = fmt.Errorf("%w: %w", b.Err, err)
		return b
	case strings.Contains(low, "please tell me who you are") || strings.Contains(low, "empty ident name") ||
		strings.Contains(low, "unable to auto-detect email address"):
		return &orchestrator.Blocker{Code: "git_identity_missing", Err: err,
			Action: "Give git an identity (`git config user.name \"Your Name\"` and `git config user.email you@example.com`), then run `story-automator run --resume`."}
	case sub == "commit" && g.hasCommitHook(ctx):
		return &orchestrator.Blocker{Code: "git_hook_rejected", Err: err,
			Action: "A git hook rejected the story's commit: fix what it reports (see the action log), or commit the story by hand, then run `story-automator run --resume`."}
	}
	return err
}

// hasCommitHook reports whether a hook that can reject a commit is installed.
func (g *Git) hasCommitHook(ctx context.Context) bool {
	out, err := g.git(ctx, nil, "rev-parse", "--git-path", "hooks")
	if err != nil {
		return false
	}
	dir := strings.TrimSpace(out)
	if hp, _ := g.git(ctx, nil, "config", "core.hooksPath"); strings.TrimSpace(hp) != "" {
		dir = strings.TrimSpace(hp)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(g.Root, dir)
	}
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg"} {
		if fi, err := os.Stat(filepath.Join(dir, h)); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return true
		}
	}
	return false
}

// SyncIndex makes the index follow HEAD on the paths of the story's commit
// sha: a run killed between `git commit` (built in the private index) and
// the reset of the user's index leaves them out of step.
func (g *Git) SyncIndex(ctx context.Context, sha string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	g.mu.Lock()
	defer g.mu.Unlock()
	out, err := g.git(ctx, nil, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--root", sha)
	if err != nil {
		return err
	}
	var spec []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			spec = append(spec, ":(top,literal)"+p)
		}
	}
	if len(spec) == 0 {
		return nil
	}
	_, err = g.git(ctx, nil, append([]string{"reset", "-q", "--"}, spec...)...)
	return err
}
