// Package gitvcs is a run's version control on the git CLI: a story's one
// commit, the state kept out of git, repairs after a killed run, and a git
// worktree per story.
package gitvcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/orchestrator"
)

// Git is a Repo on the git CLI. Commits are serialised, so parallel stories
// each get their own.
type Git struct {
	Root string
	// StatePaths are paths relative to Root that hold story-automator's state:
	// never committed, and listed in .git/info/exclude. A trailing "/" marks a directory.
	StatePaths []string
	// Planted are names (relative to Root) an agent CLI's sandbox may plant
	// when they are absent; those absent at Prepare are excluded (planted.go).
	Planted []string

	mu  sync.Mutex
	env []string
	// indexPath caches privateIndexPath's answer.
	indexPath atomic.Pointer[string]
	// prefix is the project root's path inside the repository ("" at its top, else "sub/dir/").
	prefix string
	// gitDir is the repository's git directory, absolute (set by Prepare).
	gitDir string
	// commonDir and hooksDir are where the repository's config and hooks
	// are (set by Prepare; guard.go).
	commonDir, hooksDir string
	// configFiles are the config files the guard sums (guard.go).
	configFiles []string
	// hooksCopy is the copy of the hooks every git command of the run runs
	// ("" = the repository's own); liveHooks: make none (hooks.go).
	hooksCopy string
	liveHooks bool
	// pinned are GIT_DIR, GIT_COMMON_DIR and GIT_WORK_TREE of a story's
	// worktree, read from git's own records, not from the .git file a
	// child can rewrite (pinErr: the file names a git directory that is
	// not the worktree's; worktree.go).
	pinned []string
	pinErr error
	// lockGrace replaces indexLockGrace when set (tests).
	lockGrace time.Duration
	// beforeCommit, when set, runs between building the commit's index and
	// `git commit` (tests use it to commit from another process there).
	beforeCommit func()
	// afterGitCommit, when set, runs right after `git commit` (tests kill the run there).
	afterGitCommit func()
}

var (
	_ orchestrator.Repo       = (*Git)(nil)
	_ orchestrator.HookKeeper = (*Git)(nil)
)

// commitTimeout bounds a commit, which runs to its end even when the run is
// interrupted: killing git mid-commit can leave .git/index.lock behind.
const commitTimeout = 5 * time.Minute

// tempPattern matches the temporary files of atomic writes in flight, which a
// parallel story's commit must never pick up.
const tempPattern = ":(exclude,glob)**/.*.tmp-*"

// Prepare fails with ErrNotGitRepo outside a work tree, adds the state paths
// to .git/info/exclude, and gives commits an identity when git has none.
func (g *Git) Prepare(ctx context.Context) error {
	g.hooksCopy = "" // read the repository's own settings; copyHooks sets it again
	out, err := g.git(ctx, nil, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(out) != "true" {
		return fmt.Errorf("%w: %s", orchestrator.ErrNotGitRepo, g.Root)
	}
	prefix, err := g.git(ctx, nil, "rev-parse", "--show-prefix")
	if err != nil {
		return err
	}
	g.prefix = strings.TrimSpace(prefix)
	dir, err := g.git(ctx, nil, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return err
	}
	g.gitDir = strings.TrimSpace(dir)
	if err := g.guardPaths(ctx); err != nil {
		return err
	}
	if err := g.copyHooks(ctx); err != nil {
		return err
	}
	if err := g.excludeState(ctx); err != nil {
		return err
	}
	if err := g.excludePlanted(ctx); err != nil {
		return err
	}
	if email, _ := g.git(ctx, nil, "config", "user.email"); strings.TrimSpace(email) == "" {
		g.env = []string{"GIT_AUTHOR_NAME=story-automator", "GIT_AUTHOR_EMAIL=story-automator@localhost",
			"GIT_COMMITTER_NAME=story-automator", "GIT_COMMITTER_EMAIL=story-automator@localhost"}
	}
	return nil
}

// excludeHeader opens story-automator's lines in .git/info/exclude.
const excludeHeader = "# story-automator run state (never committed)"

// dropWholeStateDir removes the line "/.story-automator/" that earlier
// versions wrote under excludeHeader: it hid the user's workflow.yaml and
// prompts too. It reports whether it removed one.
func (g *Git) dropWholeStateDir(data []byte) ([]byte, bool) {
	whole := "/" + g.prefix + orchestrator.StateDirName + "/"
	var kept []string
	inBlock, dropped := false, false
	for _, l := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == excludeHeader:
			inBlock = true
		case t == "" || strings.HasPrefix(t, "#"):
			inBlock = false
		case inBlock && t == whole && !slices.Contains(g.StatePaths, orchestrator.StateDirName+"/"):
			dropped = true
			continue
		}
		kept = append(kept, l)
	}
	return []byte(strings.Join(kept, "\n")), dropped
}

// excludeState appends the state paths missing from .git/info/exclude.
func (g *Git) excludeState(ctx context.Context) error {
	rel, err := g.git(ctx, nil, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return err
	}
	path := strings.TrimSpace(rel)
	if !filepath.IsAbs(path) {
		path = filepath.Join(g.Root, path)
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	old, dropped := g.dropWholeStateDir(data)
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, p := range g.StatePaths {
		if line := "/" + g.prefix + p; !have[line] { // exclude lines are anchored at the repository's top
			add = append(add, line)
		}
	}
	if len(add) == 0 && !dropped {
		return nil
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	if len(add) > 0 {
		b.WriteString(excludeHeader + "\n" + strings.Join(add, "\n") + "\n")
	}
	if err := atomicfile.EnsureDir(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

// pathspec is "everything in the project but story-automator's state and
// the temporary files of atomic writes in flight".
func (g *Git) pathspec() []string {
	spec := []string{"--", ".", tempPattern}
	for _, p := range g.StatePaths {
		spec = append(spec, ":(exclude)"+strings.TrimSuffix(p, "/"))
	}
	return spec
}

// Snapshot lists changed and untracked paths (state and temporary files of
// atomic writes left out) with a fingerprint of each file's metadata.
func (g *Git) Snapshot(ctx context.Context) (orchestrator.Snapshot, error) {
	out, err := g.git(ctx, nil, append([]string{"status", "--porcelain=v1", "-z", "--untracked-files=all"}, g.pathspec()...)...)
	if err != nil {
		return nil, err
	}
	snap := orchestrator.Snapshot{}
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		if len(rec) < 4 {
			continue
		}
		paths := []string{rec[3:]}
		if rec[0] == 'R' || rec[0] == 'C' { // the source path follows as its own field
			if i+1 < len(fields) {
				i++
				paths = append(paths, fields[i])
			}
		}
		for _, top := range paths {
			if rel, ok := strings.CutPrefix(top, g.prefix); ok {
				snap[rel] = fingerprint(filepath.Join(g.Root, filepath.FromSlash(rel)))
			}
		}
	}
	return snap, nil
}

// fingerprint identifies one version of a file by its metadata: an atomic
// rewrite makes a new inode, an edit in place a new size or mtime.
func fingerprint(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "gone"
	}
	ino := uint64(0)
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%d:%d:%d:%o", fi.Size(), fi.ModTime().UnixNano(), ino, fi.Mode())
}

// Trailers of a story's commit: a resumed run finds the commit by them.
const (
	trailerRun   = "Story-Automator-Run"
	trailerStory = "Story-Automator-Story"
)

// Find looks for the commit this run made for the story: a grep narrows the
// history, then the trailers must equal the run id and the story key exactly
// (a grep alone would let story 1-1 find 1-10's commit).
func (g *Git) Find(ctx context.Context, req orchestrator.CommitRequest) (string, bool, error) {
	format := "--format=%H%x00%(trailers:key=" + trailerRun + ",valueonly,separator=%x01)%x00%(trailers:key=" +
		trailerStory + ",valueonly,separator=%x01)"
	out, err := g.git(ctx, nil, "log", format, "--all-match", "--fixed-strings",
		"--grep="+trailerRun+": "+req.RunID, "--grep="+trailerStory+": "+req.Story.Key)
	if err != nil {
		if g.revision(ctx, "HEAD") == "" {
			return "", false, nil // no commits yet: git log has no history to read
		}
		return "", false, err
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\x00")
		if len(f) == 3 && hasValue(f[1], req.RunID) && hasValue(f[2], req.Story.Key) {
			return f[0], true, nil
		}
	}
	return "", false, nil
}

// hasValue reports whether a \x01-separated list of trailer values holds want.
func hasValue(values, want string) bool {
	for _, v := range strings.Split(values, "\x01") {
		if strings.TrimSpace(v) == want {
			return true
		}
	}
	return false
}

// Commit commits the request's paths (those of them that changed; state
// never) and its Contents as the story's commit, leaving every other change,
// staged or not, out of it; with nothing to take the commit is empty. The
// commit is built in a temporary index, so the user's hooks run as usual, and
// the real index then follows HEAD on the committed paths. It runs to its end
// even when ctx is cancelled (bounded by commitTimeout).
//
// The temporary index starts from HEAD as read before `git commit` runs; a
// commit another process makes in between becomes our commit's parent while
// our tree still lacks its changes. Commit then rebuilds its tree on that
// parent and swaps HEAD with a compare-and-swap (update-ref), so their change
// survives; when HEAD moved on again meanwhile it fails rather than rewrite
// their history.
func (g *Git) Commit(ctx context.Context, req orchestrator.CommitRequest) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	g.mu.Lock()
	defer g.mu.Unlock()
	snap := req.Changed
	if snap == nil {
		var err error
		if snap, err = g.Snapshot(ctx); err != nil {
			return "", err
		}
	}
	var spec []string
	for _, p := range req.Paths {
		if _, changed := snap[p]; changed && req.Contents[p] == nil {
			spec = append(spec, ":(literal)"+p)
		}
	}
	base := g.revision(ctx, "HEAD")
	index, err := g.buildIndex(ctx, base, spec, req.Contents)
	if err != nil {
		return "", err
	}
	defer os.Remove(index)
	if g.beforeCommit != nil {
		g.beforeCommit()
	}
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := g.gitEnv(ctx, env, strings.NewReader(commitMessage(req)), "commit", "-q", "--allow-empty", "-F", "-"); err != nil {
		return "", err
	}
	if g.afterGitCommit != nil {
		g.afterGitCommit()
	}
	sha, parent := g.headAndParent(ctx)
	if parent != base {
		if sha, err = g.rebuildOn(ctx, sha, parent, spec, req.Contents); err != nil {
			return "", err
		}
	}
	for _, p := range sortedKeys(req.Contents) {
		spec = append(spec, ":(literal)"+p)
	}
	if len(spec) > 0 {
		_, err = g.git(ctx, nil, append([]string{"reset", "-q", "--"}, spec...)...)
	}
	return sha, err
}

// rebuildOn replaces our commit sha, whose parent another process committed
// after our tree was taken, by one with the same message whose tree is the
// parent's plus our paths, moving HEAD from sha to it only if HEAD is still sha.
func (g *Git) rebuildOn(ctx context.Context, sha, parent string, spec []string, contents map[string][]byte) (string, error) {
	index, err := g.buildIndex(ctx, parent, spec, contents)
	if err != nil {
		return "", err
	}
	defer os.Remove(index)
	tree, err := g.gitEnv(ctx, []string{"GIT_INDEX_FILE=" + index}, nil, "write-tree")
	if err != nil {
		return "", err
	}
	msg, err := g.git(ctx, nil, "log", "-1", "--format=%B", sha)
	if err != nil {
		return "", err
	}
	fixed, err := g.git(ctx, strings.NewReader(msg), "commit-tree", strings.TrimSpace(tree), "-p", parent, "-F", "-")
	if err != nil {
		return "", err
	}
	fixed = strings.TrimSpace(fixed)
	if _, err := g.git(ctx, nil, "update-ref", "-m", "story-automator: rebuild on "+parent, "HEAD", fixed, sha); err != nil {
		return "", fmt.Errorf("HEAD moved while committing, on top of a commit that lacks %s's changes: %w", parent, err)
	}
	return fixed, nil
}

// headAndParent resolves HEAD and its first parent in one git call, or in
// two when HEAD is a root commit (which has no parent: "").
func (g *Git) headAndParent(ctx context.Context) (head, parent string) {
	out, err := g.git(ctx, nil, "rev-parse", "HEAD^{commit}", "HEAD^^{commit}")
	if f := strings.Fields(out); err == nil && len(f) == 2 {
		return f[0], f[1]
	}
	return g.revision(ctx, "HEAD"), g.revision(ctx, "HEAD^")
}

// revision resolves a revision to its sha, "" when it does not exist.
func (g *Git) revision(ctx context.Context, rev string) string {
	out, err := g.git(ctx, nil, "rev-parse", "--verify", "-q", rev+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// buildIndex makes a temporary index holding base's tree (empty for ""),
// the work tree's version of the spec's paths and contents' data, and
// returns its path.
func (g *Git) buildIndex(ctx context.Context, base string, spec []string, contents map[string][]byte) (string, error) {
	index, err := g.tempIndex(ctx, base)
	if err != nil {
		return "", err
	}
	env := []string{"GIT_INDEX_FILE=" + index}
	if len(spec) > 0 {
		if _, err := g.gitEnv(ctx, env, nil, append([]string{"add", "-A", "--"}, spec...)...); err != nil {
			os.Remove(index)
			return "", err
		}
	}
	for _, p := range sortedKeys(contents) {
		if err := g.stageContent(ctx, env, p, contents[p]); err != nil {
			os.Remove(index)
			return "", err
		}
	}
	return index, nil
}

// tempIndex makes an index holding base's tree (empty for "") and returns
// its path.
func (g *Git) tempIndex(ctx context.Context, base string) (string, error) {
	index, err := g.privateIndexPath(ctx)
	if err != nil {
		return "", err
	}
	// Commits take turns under the run lock: a lock of the private index
	// left by a killed git is stale.
	_ = os.Remove(index + ".lock")
	_ = os.Remove(index)
	tree := []string{"read-tree", base}
	if base == "" {
		tree = []string{"read-tree", "--empty"}
	}
	if _, err := g.gitEnv(ctx, []string{"GIT_INDEX_FILE=" + index}, nil, tree...); err != nil {
		return "", err
	}
	return index, nil
}

// privateIndexPath is where a commit's temporary index lives; git is asked
// once per Git (the answer depends only on the repository's layout).
func (g *Git) privateIndexPath(ctx context.Context) (string, error) {
	if p := g.indexPath.Load(); p != nil {
		return *p, nil
	}
	rel, err := g.git(ctx, nil, "rev-parse", "--git-path", privateIndex)
	if err != nil {
		return "", err
	}
	index := strings.TrimSpace(rel)
	if !filepath.IsAbs(index) {
		index = filepath.Join(g.Root, index)
	}
	g.indexPath.Store(&index)
	return index, nil
}

// stageContent puts data into the index as path's content, whatever the
// work tree holds.
func (g *Git) stageContent(ctx context.Context, env []string, path string, data []byte) error {
	out, err := g.gitEnv(ctx, env, bytes.NewReader(data), "hash-object", "-w", "--stdin", "--path", path)
	if err != nil {
		return err
	}
	// --cacheinfo takes the path from the repository's top, not from -C's directory.
	_, err = g.gitEnv(ctx, env, nil, "update-index", "--add", "--cacheinfo", "100644,"+strings.TrimSpace(out)+","+g.prefix+path)
	return err
}

// CommittedFile returns a project file as HEAD has it; ok is false when HEAD
// has no such file (or there is no commit yet).
//
// One `cat-file --batch` answers all three questions (is there a commit, has
// it the file, what does it hold): it prints "<name> missing" for the first
// two and "<oid> <type> <size>" and the content otherwise.
func (g *Git) CommittedFile(ctx context.Context, path string) ([]byte, bool, error) {
	name := "HEAD:" + g.prefix + path
	if strings.ContainsAny(name, "\n\r") {
		return nil, false, fmt.Errorf("cannot read %q from git: a line break in its name", path)
	}
	out, err := g.git(ctx, strings.NewReader(name+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, false, err
	}
	header, body, _ := strings.Cut(out, "\n")
	f := strings.Fields(header)
	switch {
	case len(f) == 2 && f[1] == "missing":
		return nil, false, nil
	case len(f) != 3:
		return nil, false, fmt.Errorf("git cat-file: unexpected answer %q for %s", header, name)
	case f[1] != "blob":
		return nil, false, nil // a directory (tree) of that name is no file
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size > len(body) {
		return nil, false, fmt.Errorf("git cat-file: short answer for %s", name)
	}
	return []byte(body[:size]), true, nil
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// git runs one git command in the project.
func (g *Git) git(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	return g.gitEnv(ctx, nil, stdin, args...)
}

// gitEnv runs one git command in the project with extra environment, in
// its own process group (see startGit). GIT_OPTIONAL_LOCKS=0 keeps a
// reading command such as status from taking the index lock to refresh it.
func (g *Git) gitEnv(ctx context.Context, env []string, stdin io.Reader, args ...string) (string, error) {
	if g.pinErr != nil {
		return "", g.pinErr
	}
	pre := []string{"-C", g.Root}
	if g.hooksCopy != "" {
		// A confined run's git: the hooks of its start, and no fsmonitor
		// command, which every status would run from the repository's
		// config before the guard (guard.go) sees a child planted it.
		pre = append(pre, "-c", "core.hooksPath="+g.hooksCopy, "-c", "core.fsmonitor=false")
	}
	cmd := exec.CommandContext(ctx, "git", append(pre, args...)...)
	cmd.Env = append(append(append(append(os.Environ(), "GIT_OPTIONAL_LOCKS=0"), g.env...), g.pinned...), env...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := g.startGit(cmd, args[0]); err != nil {
		stderr := strings.TrimSpace(errb.String())
		return out.String(), g.classify(ctx, args[0], stderr, fmt.Errorf("git %s: %w: %s", args[0], err, stderr))
	}
	return out.String(), nil
}

// commitMessage is a story's commit message; its trailers let a resumed run
// find the commit again.
func commitMessage(req orchestrator.CommitRequest) string {
	title := strings.TrimSpace(req.Story.Title)
	subject := "story " + req.Story.Dotted
	if req.Retro {
		subject, title = "epic "+req.Story.Epic, "retrospective"
	}
	if title != "" {
		subject += ": " + title
	}
	body := "Implemented and reviewed by story-automator."
	if req.Subject != "" {
		subject = req.Subject
	}
	if req.Body != "" {
		body = strings.TrimSpace(req.Body)
	}
	return fmt.Sprintf("%s\n\n%s\n\n%s: %s\n%s: %s\n",
		subject, body, trailerRun, req.RunID, trailerStory, req.Story.Key)
}
