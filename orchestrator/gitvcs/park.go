package gitvcs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/orchestrator"
)

var (
	_ orchestrator.Parker         = (*Git)(nil)
	_ orchestrator.WorktreeParker = (*Worktrees)(nil)
)

// Park keeps a parked story's work in the project's tree at req.Ref: a
// commit on top of HEAD whose tree is HEAD's with req.Paths as the work
// tree has them (an earlier commit at the ref is its second parent, so a
// second park of the story loses nothing of the first). Only once the ref
// points at it are the paths set back to HEAD: files HEAD has are checked
// out again, the others removed. A run killed in between leaves the work in
// the tree, the ref, or both. It returns the commit ("" when the paths hold
// no change from HEAD).
func (g *Git) Park(ctx context.Context, req orchestrator.ParkRequest) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(req.Paths) == 0 {
		return "", nil
	}
	spec := make([]string, len(req.Paths))
	for i, p := range req.Paths {
		spec[i] = ":(literal)" + p
	}
	head := g.revision(ctx, "HEAD")
	if head == "" {
		return "", errors.New("the project has no commit to keep the parked work on")
	}
	index, err := g.buildIndex(ctx, head, spec, nil)
	if err != nil {
		return "", err
	}
	defer os.Remove(index)
	tree, err := g.gitEnv(ctx, []string{"GIT_INDEX_FILE=" + index}, nil, "write-tree")
	if err != nil {
		return "", err
	}
	tree = strings.TrimSpace(tree)
	if base, err := g.git(ctx, nil, "rev-parse", head+"^{tree}"); err != nil || strings.TrimSpace(base) == tree {
		return "", err
	}
	args := []string{"commit-tree", tree, "-p", head}
	if prev := g.revision(ctx, req.Ref); prev != "" {
		args = append(args, "-p", prev)
	}
	sha, err := g.git(ctx, strings.NewReader(req.Message), append(args, "-F", "-")...)
	if err != nil {
		return "", err
	}
	sha = strings.TrimSpace(sha)
	if _, err := g.git(ctx, nil, "update-ref", "-m", "story-automator: park "+req.Story, req.Ref, sha); err != nil {
		return "", err
	}
	return sha, g.restorePaths(ctx, head, req.Paths)
}

// restorePaths sets paths back to commit head in the index and the work
// tree: those head has are checked out, the others removed.
func (g *Git) restorePaths(ctx context.Context, head string, paths []string) error {
	args := []string{"ls-tree", "-r", "--full-name", "--name-only", "-z", head, "--"}
	for _, p := range paths {
		args = append(args, ":(literal)"+p)
	}
	out, err := g.git(ctx, nil, args...)
	if err != nil {
		return err
	}
	has := map[string]bool{}
	for _, top := range strings.Split(out, "\x00") {
		if rel, ok := strings.CutPrefix(top, g.prefix); ok && top != "" {
			has[rel] = true
		}
	}
	var back, gone []string
	for _, p := range paths {
		if has[p] {
			back = append(back, ":(literal)"+p)
		} else {
			gone = append(gone, p)
		}
	}
	if len(back) > 0 {
		if _, err := g.git(ctx, nil, append([]string{"checkout", "-q", head, "--"}, back...)...); err != nil {
			return err
		}
	}
	for _, p := range gone {
		_, _ = g.git(ctx, nil, "rm", "-q", "--cached", "--ignore-unmatch", "--", ":(literal)"+p)
		if err := os.Remove(filepath.Join(g.Root, filepath.FromSlash(p))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ParkWorktree commits everything that changed in dir, the project's
// folder in a parked story's worktree, on the worktree's branch, and points
// req.Ref at the branch's tip, which it returns. The worktree stays.
func (w *Worktrees) ParkWorktree(ctx context.Context, dir string, req orchestrator.ParkRequest) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	wt := w.in(dir)
	out, err := wt.git(ctx, nil, "status", "--porcelain", "--", ".")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(out) != "" {
		if _, err := wt.git(ctx, nil, "add", "-A", "--", "."); err != nil {
			return "", err
		}
		if _, err := wt.git(ctx, strings.NewReader(req.Message), "commit", "-q", "--no-verify", "-F", "-"); err != nil {
			return "", fmt.Errorf("commit the parked work on %s: %w", w.Branch(req.Story), err)
		}
	}
	tip := wt.revision(ctx, "HEAD")
	if tip == "" {
		return "", errors.New("the story's worktree has no commit")
	}
	if _, err := w.Project.git(ctx, nil, "update-ref", "-m", "story-automator: park "+req.Story, req.Ref, tip); err != nil {
		return "", err
	}
	return tip, nil
}

// Unpark applies the change of the commit at ref over its first parent to
// the work tree (`git apply`, the index untouched). A change already in
// the tree is left as it is (restored false); one that does not apply is
// an error.
func (g *Git) Unpark(ctx context.Context, ref string) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.revision(ctx, ref) == "" {
		return false, nil
	}
	patch, err := g.git(ctx, nil, "diff", "--binary", "--full-index", ref+"^1", ref, "--", ".")
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(patch) == "" {
		return false, nil
	}
	if _, err := g.git(ctx, strings.NewReader(patch), "apply", "--check", "-"); err != nil {
		if _, rerr := g.git(ctx, strings.NewReader(patch), "apply", "--check", "--reverse", "-"); rerr == nil {
			return false, nil
		}
		return false, err
	}
	if _, err := g.git(ctx, strings.NewReader(patch), "apply", "-"); err != nil {
		return false, err
	}
	return true, nil
}
