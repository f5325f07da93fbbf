package gitvcs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/hosts"
)

// HostRepo is the project's repository on an ssh host (bare, under the
// host's work directory): a story that runs there gets its work tree from
// it, and its work comes back from it, over the host's one connection.
// The user's machine reaches the host; the host never reaches back.
type HostRepo struct {
	Host *hosts.Host
	// Path is the repository's path on the host.
	Path string
}

// WorkCommit returns a commit holding the files of dir (a story's
// worktree, or a folder of it: the whole worktree counts) as they are now,
// tracked or not (ignored files left out), whose parent is HEAD; HEAD
// itself when nothing changed. It changes no branch, index or file.
func WorkCommit(ctx context.Context, dir string) (string, error) {
	wt := plumbing(dir)
	head := wt.revision(ctx, "HEAD")
	if head == "" {
		return "", fmt.Errorf("%s: no commit checked out", dir)
	}
	f, err := os.CreateTemp("", "sa-index-")
	if err != nil {
		return "", err
	}
	index := f.Name()
	f.Close()
	os.Remove(index) // git makes it; an empty file is not an index
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	for _, args := range [][]string{{"read-tree", "HEAD"}, {"add", "-A", "--", ":(top)"}} {
		if _, err := wt.gitEnv(ctx, env, nil, args...); err != nil {
			return "", err
		}
	}
	tree, err := wt.gitEnv(ctx, env, nil, "write-tree")
	if err != nil {
		return "", err
	}
	tree = strings.TrimSpace(tree)
	if base, _ := wt.git(ctx, nil, "rev-parse", "HEAD^{tree}"); strings.TrimSpace(base) == tree {
		return head, nil
	}
	// A commit that only carries files to the host, never landed: the
	// user's identity need not be set for it.
	ident := []string{"GIT_AUTHOR_NAME=story-automator", "GIT_AUTHOR_EMAIL=story-automator@localhost",
		"GIT_COMMITTER_NAME=story-automator", "GIT_COMMITTER_EMAIL=story-automator@localhost"}
	out, err := wt.gitEnv(ctx, ident, strings.NewReader("story-automator: work in progress\n"), "commit-tree", tree, "-p", head, "-F", "-")
	return strings.TrimSpace(out), err
}

// Push makes ref on the host's repository point at sha (from the
// repository of dir), whatever it pointed at before.
func (r HostRepo) Push(ctx context.Context, dir, sha, ref string) error {
	return r.git(ctx, dir, "push", "-q", "--force", r.Host.GitURL(r.Path), sha+":"+ref)
}

// Mirror fetches ref from the host's repository and makes the index and
// files of dir's worktree hold its tree, HEAD left where it is: the work
// done there shows here as the worktree's uncommitted changes, as if it
// had been done here. It returns the commit fetched.
func (r HostRepo) Mirror(ctx context.Context, dir, ref string) (string, error) {
	if err := r.git(ctx, dir, "fetch", "-q", "--no-tags", r.Host.GitURL(r.Path), ref); err != nil {
		return "", err
	}
	wt := plumbing(dir)
	sha := wt.revision(ctx, "FETCH_HEAD")
	if sha == "" {
		return "", fmt.Errorf("fetch %s from %s: no commit", ref, r.Host.Name)
	}
	if err := HoldTree(ctx, dir, sha); err != nil {
		return "", fmt.Errorf("take the work of %s from %s: %w", ref, r.Host.Name, err)
	}
	return sha, nil
}

// HoldTree makes the index and files of dir's worktree hold commit sha's
// tree, HEAD left where it is: files the tree lacks that the index had are
// removed, untracked ones stay. Call it holding the run lock.
func HoldTree(ctx context.Context, dir, sha string) error {
	top, _, err := TopOf(ctx, dir)
	if err != nil {
		return err
	}
	wt := plumbing(top)
	// An index lock a killed run left behind (mid read-tree) is stale: the
	// run holds the run lock, and nothing else works in a story's worktree.
	if p, err := wt.git(ctx, nil, "rev-parse", "--git-path", "index.lock"); err == nil {
		_ = os.Remove(absIn(top, strings.TrimSpace(p)))
	}
	_, err = wt.git(ctx, nil, "read-tree", "-u", "--reset", sha)
	return err
}

// git runs a git command in dir that talks to the host over its connection.
func (r HostRepo) git(ctx context.Context, dir string, args ...string) error {
	ssh, err := r.Host.GitSSH(ctx)
	if err != nil {
		return err
	}
	_, err = plumbing(filepath.Clean(dir)).gitEnv(ctx, []string{"GIT_SSH_COMMAND=" + ssh, "GIT_SSH_VARIANT=ssh"}, nil, args...)
	if r.Host.GitRoundTrip(ctx, err != nil) {
		return fmt.Errorf("host %s: %w: %v", r.Host.Name, hosts.ErrUnreachable, err)
	}
	if err != nil {
		return fmt.Errorf("host %s: %w", r.Host.Name, err)
	}
	return nil
}

// TopOf returns the top of dir's worktree and dir's path inside it ("" at
// the top, else "sub/dir/").
func TopOf(ctx context.Context, dir string) (top, prefix string, err error) {
	g := plumbing(dir)
	out, err := g.git(ctx, nil, "rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 1 || lines[0] == "" {
		return "", "", fmt.Errorf("%s: not in a git worktree", dir)
	}
	if len(lines) > 1 {
		prefix = lines[1]
	}
	return lines[0], prefix, nil
}

// plumbing runs the git commands that carry a story's work to a host and
// back in dir, with no hooks at all: they are the run's transport (a push
// would run a pre-push hook a child may have rewritten in its worktree).
func plumbing(dir string) *Git {
	return &Git{Root: dir, hooksCopy: os.DevNull}
}
