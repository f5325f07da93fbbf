package gitvcs

import (
	"context"
	"errors"
	"strings"

	"github.com/story-automator/story-automator/orchestrator"
)

// StoryTree is the git work a pipeline whose worker commits by itself
// (BMAD 6.12's build-auto) needs in the project's folder or in a story's
// worktree: the run's bookkeeping commits and the squash of the worker's
// commits into the story's one commit.
type StoryTree struct{ g *Git }

// StoryTree is the project's folder ("" or the root) or the project's
// folder in a story's worktree of run.
func (g *Git) StoryTree(run, dir string) *StoryTree {
	if dir == "" || dir == g.Root {
		return &StoryTree{g: g}
	}
	w := &Worktrees{Project: g, Run: run}
	return &StoryTree{g: w.in(dir)}
}

// Head is the folder's HEAD commit.
func (t *StoryTree) Head(ctx context.Context) (string, error) {
	if rev := t.g.revision(ctx, "HEAD"); rev != "" {
		return rev, nil
	}
	return "", errors.New("the repository has no commit yet")
}

// Dirty lists the folder's changed and untracked paths (the run's state
// left out), sorted.
func (t *StoryTree) Dirty(ctx context.Context) ([]string, error) {
	snap, err := t.g.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return snap.Paths(), nil
}

// CommitPaths commits paths (relative to the folder) as the work tree has
// them, and nothing else, with message.
func (t *StoryTree) CommitPaths(ctx context.Context, message string, paths []string) error {
	args := []string{"commit", "-q", "-F", "-", "--"}
	for _, p := range paths {
		args = append(args, ":(literal)"+p)
	}
	if _, err := t.g.git(ctx, nil, append([]string{"add", "-A", "--"}, args[5:]...)...); err != nil {
		return err
	}
	_, err := t.g.git(ctx, strings.NewReader(message), args...)
	return err
}

// Find is the unit's commit of this run when there is one (its trailers).
func (t *StoryTree) Find(ctx context.Context, req orchestrator.CommitRequest) (string, bool, error) {
	return t.g.Find(ctx, req)
}

// Messages returns the messages of the commits from..HEAD, oldest first.
func (t *StoryTree) Messages(ctx context.Context, from string) ([]string, error) {
	out, err := t.g.git(ctx, nil, "log", "--reverse", "--format=%B%x00", from+"..HEAD")
	if err != nil {
		return nil, err
	}
	var msgs []string
	for _, m := range strings.Split(out, "\x00") {
		if m = strings.TrimSpace(m); m != "" {
			msgs = append(msgs, m)
		}
	}
	return msgs, nil
}

// Squash makes everything committed since base, with paths as the work
// tree has them, req's one commit (its message, its trailers: Find finds
// it) and returns it. When HEAD already is req's commit it is returned as
// it is.
func (t *StoryTree) Squash(ctx context.Context, base string, req orchestrator.CommitRequest, paths []string) (string, error) {
	ctx = context.WithoutCancel(ctx)
	if msg, err := t.g.git(ctx, nil, "log", "-1", "--format=%B"); err == nil &&
		strings.Contains(msg, trailerRun+": "+req.RunID) && strings.Contains(msg, trailerStory+": "+req.Story.Key) {
		return t.Head(ctx)
	}
	if _, err := t.g.git(ctx, nil, "reset", "-q", "--soft", base); err != nil {
		return "", err
	}
	if len(paths) > 0 {
		args := []string{"add", "-A", "--"}
		for _, p := range paths {
			args = append(args, ":(literal)"+p)
		}
		if _, err := t.g.git(ctx, nil, args...); err != nil {
			return "", err
		}
	}
	if _, err := t.g.git(ctx, strings.NewReader(commitMessage(req)), "commit", "-q", "--allow-empty", "-F", "-"); err != nil {
		return "", err
	}
	return t.Head(ctx)
}
