package gitvcs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/orchestrator"
)

// Worktrees gives each story of a run its own git worktree on a branch of
// the run, and lands a story's commit on the user's branch. The worktrees
// live in the repository's common git directory, under
// story-automator/worktrees/<run>/<story>: git never commits there, and the
// user finds them there (and in `git worktree list`).
type Worktrees struct {
	// Project is the user's checkout, prepared (see Git.Prepare).
	Project *Git
	Run     string
	// StatusFile is sprint-status.yaml's path from the repository's top
	// ("" = none). Its entries are never merged as text: Land takes the
	// user's branch's version and lets MarkDone set the story's entries.
	StatusFile string
	// MarkDone sets the story's entries in StatusFile, in the story's
	// worktree dir, on the user's branch's version of the file.
	MarkDone func(dir, story string) error
}

var _ orchestrator.Worktrees = (*Worktrees)(nil)

// Branch is the run branch a story's worktree is on.
func (w *Worktrees) Branch(story string) string {
	return "story-automator/" + w.Run + "/" + story
}

// Dir is where a story's worktree lives.
func (w *Worktrees) Dir(ctx context.Context, story string) (string, error) {
	common, err := w.commonDir(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(common, "story-automator", "worktrees", w.Run, story), nil
}

// commonDir is the repository's git directory shared by its worktrees.
func (w *Worktrees) commonDir(ctx context.Context) (string, error) {
	out, err := w.Project.git(ctx, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	return strings.TrimSpace(out), err
}

// in runs git commands in a story's worktree (or a folder of it), with the
// project's identity and hooks, and the worktree's git directories pinned.
func (w *Worktrees) in(dir string) *Git {
	g := &Git{Root: dir, env: w.Project.env, hooksCopy: w.Project.hooksCopy}
	g.pinned, g.pinErr = w.pin(dir)
	return g
}

// pin names a worktree's git directories to git by its variables, so the
// run's git never follows what a child can rewrite: the worktree's .git
// file (it could name a git directory of the child's making, whose config
// runs code) and its git directory's commondir file. The .git file must
// name a git directory of the repository's worktrees; no .git file (the
// worktree is not made yet) pins nothing.
func (w *Worktrees) pin(dir string) ([]string, error) {
	common := w.Project.commonDir
	if common == "" {
		return nil, nil
	}
	// The worktrees live under the common directory: look no higher.
	top := filepath.Clean(dir)
	for {
		if !strings.HasPrefix(top, common+string(filepath.Separator)) {
			return nil, nil
		}
		if _, err := os.Lstat(filepath.Join(top, ".git")); err == nil {
			break
		}
		top = filepath.Dir(top)
	}
	b, err := os.ReadFile(filepath.Join(top, ".git"))
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", errWorktreeGit, filepath.Join(top, ".git"), err)
	}
	gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(top, gd)
	}
	gd = filepath.Clean(gd)
	if fi, err := os.Stat(gd); !ok || err != nil || !fi.IsDir() || filepath.Dir(gd) != filepath.Join(common, "worktrees") {
		return nil, &orchestrator.Blocker{Code: orchestrator.CodeGitTampered,
			Err: fmt.Errorf("%w: %s names %q, not a worktree of the repository; the run's git, which no sandbox confines, would read that folder's config",
				errWorktreeGit, filepath.Join(top, ".git"), gd),
			Action: "look at " + filepath.Join(top, ".git") + " (a child rewrote it), put back `gitdir: " +
				filepath.Join(common, "worktrees", filepath.Base(top)) + "` or remove the worktree, then run `" + orchestrator.ResumeCommand + "`"}
	}
	return []string{"GIT_DIR=" + gd, "GIT_COMMON_DIR=" + common, "GIT_WORK_TREE=" + top}, nil
}

// errWorktreeGit: a story's worktree's .git file does not name one of the
// repository's worktrees (a child rewrote it); the run's git refuses it.
var errWorktreeGit = errors.New("the worktree's git directory is not the repository's")

// Add makes the story's worktree on its branch, the branch starting at base
// when it does not exist yet, and returns the worktree's path. It reuses a
// worktree that is whole, and recreates one a killed run left half made;
// a branch that exists keeps its commits.
func (w *Worktrees) Add(ctx context.Context, story, base string) (string, error) {
	dir, err := w.Dir(ctx, story)
	if err != nil {
		return "", err
	}
	branch := w.Branch(story)
	if _, err := w.pin(dir); err != nil {
		return "", err // a child rewrote its .git file: never removed unseen
	}
	if out, err := w.in(dir).git(ctx, nil, "symbolic-ref", "-q", "HEAD"); err == nil && strings.TrimSpace(out) == "refs/heads/"+branch {
		if top, err := w.in(dir).git(ctx, nil, "rev-parse", "--show-toplevel"); err == nil && sameDir(strings.TrimSpace(top), dir) {
			return dir, nil
		}
	}
	// Half made (killed during `git worktree add`, which locks it meanwhile) or gone.
	w.dropWorktree(ctx, dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if _, err := w.Project.git(ctx, nil, "worktree", "prune"); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return "", err
	}
	args := []string{"worktree", "add", "-q", dir, branch}
	if w.Project.revision(ctx, "refs/heads/"+branch) == "" {
		args = []string{"worktree", "add", "-q", "-b", branch, dir, base}
	}
	if _, err := w.Project.git(ctx, nil, args...); err != nil {
		return "", fmt.Errorf("make the worktree of story %s: %w", story, err)
	}
	return dir, nil
}

func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// landBranch brings the story branch's commits onto the user's branch and returns
// the branch's new tip. The story's commit is rebased in its own worktree
// onto the user's branch, and the user's branch then fast-forwards to it
// (`git merge --ff-only`, which changes neither ref nor files when it cannot
// finish): the user's branch never holds a half-merged state. A conflict is
// a Blocker with CodeMergeConflict naming the files; the story's worktree is
// left as it was before the rebase.
func (w *Worktrees) landBranch(ctx context.Context, story string) (string, error) {
	dir, err := w.Dir(ctx, story)
	if err != nil {
		return "", err
	}
	wt := w.in(dir)
	branch := w.Branch(story)
	// A rebase a killed run left in the story's worktree is undone first.
	if p, err := wt.git(ctx, nil, "rev-parse", "--git-path", "rebase-merge"); err == nil {
		if _, statErr := os.Stat(absIn(dir, strings.TrimSpace(p))); statErr == nil {
			_, _ = wt.git(ctx, nil, "rebase", "--abort")
		}
	}
	for attempt := 0; ; attempt++ {
		tip := w.Project.revision(ctx, "HEAD")
		if tip == "" {
			return "", errors.New("the user's branch has no commit to land on")
		}
		if err := w.takeStatus(ctx, wt, tip); err != nil {
			return "", err
		}
		if _, err := wt.git(ctx, nil, "merge-base", "--is-ancestor", tip, "HEAD"); err != nil {
			if _, err := wt.git(ctx, nil, "rebase", "-q", tip); err != nil {
				files, _ := wt.git(ctx, nil, "diff", "--name-only", "--diff-filter=U")
				_, _ = wt.git(ctx, nil, "rebase", "--abort")
				names := strings.Fields(files)
				return "", &orchestrator.Blocker{
					Code:   orchestrator.CodeMergeConflict,
					Action: fmt.Sprintf("resolve it in %s (rebase branch %s onto your branch and commit), then run --resume", dir, branch),
					Err:    fmt.Errorf("story %s does not apply on your branch: conflict in %s", story, strings.Join(names, ", ")),
				}
			}
		}
		if err := w.markDone(ctx, wt, story); err != nil {
			return "", err
		}
		if _, err := w.Project.git(ctx, nil, "merge", "--ff-only", "-q", "refs/heads/"+branch); err != nil {
			// The user's branch moved between the rebase and the merge: once more.
			if attempt < 2 && w.Project.revision(ctx, "HEAD") != tip {
				continue
			}
			return "", fmt.Errorf("land story %s on your branch: %w", story, err)
		}
		return w.Project.revision(ctx, "HEAD"), nil
	}
}

func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// Remove deletes a story's worktree and its branch, and the run's directory
// once it holds no worktree.
func (w *Worktrees) Remove(ctx context.Context, story string) error {
	dir, err := w.Dir(ctx, story)
	if err != nil {
		return err
	}
	// Locks a killed git left (in the branch's ref, the worktree's index)
	// are stale: the run holds the run lock.
	if common, err := w.commonDir(ctx); err == nil {
		_ = os.Remove(filepath.Join(common, "refs", "heads", filepath.FromSlash(w.Branch(story))+".lock"))
	}
	if p, err := w.in(dir).git(ctx, nil, "rev-parse", "--git-path", "index.lock"); err == nil {
		_ = os.Remove(absIn(dir, strings.TrimSpace(p)))
	}
	w.dropWorktree(ctx, dir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if _, err := w.Project.git(ctx, nil, "worktree", "prune"); err != nil {
		return err
	}
	if w.Project.revision(ctx, "refs/heads/"+w.Branch(story)) != "" {
		if _, err := w.Project.git(ctx, nil, "branch", "-q", "-D", w.Branch(story)); err != nil {
			return err
		}
	}
	// The run's folder, then worktrees/ and story-automator/, once empty.
	run := filepath.Dir(dir)
	for _, d := range []string{run, filepath.Dir(run), filepath.Dir(filepath.Dir(run))} {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil //nolint:nilerr // the folders left are not empty: they stay
}

// dropWorktree removes git's record of a worktree, even a locked one whose
// checkout is gone (a `git worktree add` killed midway leaves it locked).
func (w *Worktrees) dropWorktree(ctx context.Context, dir string) {
	_, _ = w.Project.git(ctx, nil, "worktree", "unlock", dir)
	_, _ = w.Project.git(ctx, nil, "worktree", "remove", "--force", "--force", dir)
}

// takeStatus makes the story's last commit (HEAD of its worktree) hold
// StatusFile as the story's base (its merge base with tip) has it, so no
// rebase ever merges its text.
func (w *Worktrees) takeStatus(ctx context.Context, wt *Git, tip string) error {
	if w.StatusFile == "" {
		return nil
	}
	out, err := wt.git(ctx, nil, "merge-base", tip, "HEAD")
	if err != nil {
		return err
	}
	rev := strings.TrimSpace(out)
	if _, err := wt.git(ctx, nil, "diff", "--quiet", rev, "HEAD", "--", ":(top,literal)"+w.StatusFile); err == nil {
		return nil
	}
	if _, err := wt.git(ctx, nil, "cat-file", "-e", rev+":"+w.StatusFile); err != nil {
		_, err = wt.git(ctx, nil, "rm", "-q", "--cached", "--", ":(top,literal)"+w.StatusFile)
		if err != nil {
			return err
		}
	} else if _, err := wt.git(ctx, nil, "checkout", rev, "--", ":(top,literal)"+w.StatusFile); err != nil {
		return err
	}
	_, err = wt.git(ctx, nil, "commit", "-q", "--amend", "--no-edit", "--allow-empty")
	return err
}

// markDone sets the story's entries in the user's branch's StatusFile, which
// the rebased story commit holds, and amends the commit with it.
func (w *Worktrees) markDone(ctx context.Context, wt *Git, story string) error {
	if w.StatusFile == "" || w.MarkDone == nil {
		return nil
	}
	if err := w.MarkDone(wt.Root, story); err != nil {
		return fmt.Errorf("mark story %s done: %w", story, err)
	}
	if _, err := wt.git(ctx, nil, "add", "-A", "--", ":(top)"); err != nil {
		return err
	}
	if _, err := wt.git(ctx, nil, "diff", "--cached", "--quiet"); err == nil {
		return nil
	}
	_, err := wt.git(ctx, nil, "commit", "-q", "--amend", "--no-edit")
	return err
}

// Worktrees returns the worktrees of run in the project. statusFile is
// sprint-status.yaml relative to the project ("" = none) and markDone sets a
// story's entries in it, in the project's folder of a worktree.
func (g *Git) Worktrees(run, statusFile string, markDone func(projectDir, story string) error) *Worktrees {
	w := &Worktrees{Project: g, Run: run}
	if statusFile != "" {
		w.StatusFile = g.prefix + statusFile
		w.MarkDone = func(dir, story string) error {
			return markDone(filepath.Join(dir, filepath.FromSlash(g.prefix)), story)
		}
	}
	return w
}

// Enter makes the story's worktree from the user's branch as it is now (or
// reuses it, see Add) and returns the project's folder in it and its branch.
func (w *Worktrees) Enter(ctx context.Context, story string) (dir, branch string, err error) {
	top, err := w.Add(ctx, story, w.Project.revision(ctx, "HEAD"))
	if err != nil {
		return "", "", err
	}
	return filepath.Join(top, filepath.FromSlash(w.Project.prefix)), w.Branch(story), nil
}

// Land commits the story's work in dir, its project folder in the story's
// worktree (amending the commit an earlier attempt made there), and lands
// it on the user's branch (see landBranch).
func (w *Worktrees) Land(ctx context.Context, dir string, req orchestrator.CommitRequest) (string, error) {
	wt := w.in(dir)
	out, err := wt.git(ctx, nil, "status", "--porcelain", "--", ".")
	if err != nil {
		return "", err
	}
	committed := false
	if mine, err := wt.git(ctx, nil, "log", "-1", "--format=%B"); err == nil {
		committed = strings.Contains(mine, trailerRun+": "+req.RunID) && strings.Contains(mine, trailerStory+": "+req.Story.Key)
	}
	if !committed || strings.TrimSpace(out) != "" {
		if _, err := wt.git(ctx, nil, "add", "-A", "--", "."); err != nil {
			return "", err
		}
		args := []string{"commit", "-q", "--allow-empty", "-F", "-"}
		if committed {
			args = append(args, "--amend")
		}
		if _, err := wt.git(ctx, strings.NewReader(commitMessage(req)), args...); err != nil {
			return "", err
		}
	}
	return w.landBranch(ctx, req.Story.Key)
}
