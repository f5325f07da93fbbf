package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// Repo is the project's version control as a run needs it.
type Repo interface {
	Committer
	// Prepare checks the repository and keeps story-automator's state out of it.
	Prepare(ctx context.Context) error
	// Dirty lists the project's uncommitted changes (story-automator's state left out).
	Dirty(ctx context.Context) ([]string, error)
}

// Git is a Repo on the git CLI. Commits are serialised, so parallel stories
// each get their own.
type Git struct {
	Root string
	// StatePaths are paths relative to Root that hold story-automator's state:
	// never committed, and listed in .git/info/exclude. A trailing "/" marks a directory.
	StatePaths []string

	mu  sync.Mutex
	env []string
}

// tempPattern matches the temporary files of atomic writes in flight, which a
// parallel story's commit must never pick up.
const tempPattern = ":(exclude,glob)**/.*.tmp-*"

// Prepare fails with ErrNotGitRepo outside a work tree, adds the state paths
// to .git/info/exclude, and gives commits an identity when git has none.
func (g *Git) Prepare(ctx context.Context) error {
	out, err := g.git(ctx, nil, "rev-parse", "--is-inside-work-tree")
	if err != nil || strings.TrimSpace(out) != "true" {
		return fmt.Errorf("%w: %s", ErrNotGitRepo, g.Root)
	}
	if err := g.excludeState(ctx); err != nil {
		return err
	}
	if email, _ := g.git(ctx, nil, "config", "user.email"); strings.TrimSpace(email) == "" {
		g.env = []string{"GIT_AUTHOR_NAME=story-automator", "GIT_AUTHOR_EMAIL=story-automator@localhost",
			"GIT_COMMITTER_NAME=story-automator", "GIT_COMMITTER_EMAIL=story-automator@localhost"}
	}
	return nil
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
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, p := range g.StatePaths {
		if line := "/" + p; !have[line] {
			add = append(add, line)
		}
	}
	if len(add) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.Write(old)
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString("# story-automator run state (never committed)\n" + strings.Join(add, "\n") + "\n")
	if err := atomicfile.EnsureDir(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

// pathspec is "everything in the project but story-automator's state";
// withState adds the state paths as exclusions, which only commands that do
// not complain about ignored paths accept.
func (g *Git) pathspec(withState bool) []string {
	spec := []string{"--", ".", tempPattern}
	if withState {
		for _, p := range g.StatePaths {
			spec = append(spec, ":(exclude)"+strings.TrimSuffix(p, "/"))
		}
	}
	return spec
}

// statePathspec names the state paths themselves.
func (g *Git) statePathspec() []string {
	spec := []string{"--"}
	for _, p := range g.StatePaths {
		spec = append(spec, strings.TrimSuffix(p, "/"))
	}
	return spec
}

// Dirty lists changed and untracked paths, state excluded.
func (g *Git) Dirty(ctx context.Context) ([]string, error) {
	out, err := g.git(ctx, nil, append([]string{"status", "--porcelain=v1", "--untracked-files=all"}, g.pathspec(true)...)...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 3 {
			paths = append(paths, l[3:])
		}
	}
	return paths, nil
}

// Trailers of a story's commit: a resumed run finds the commit by them.
const (
	trailerRun   = "Story-Automator-Run"
	trailerStory = "Story-Automator-Story"
)

// Find looks for the commit this run made for the story: a grep narrows the
// history, then the trailers must equal the run id and the story key exactly
// (a grep alone would let story 1-1 find 1-10's commit).
func (g *Git) Find(ctx context.Context, req CommitRequest) (string, bool, error) {
	if _, err := g.git(ctx, nil, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return "", false, nil // no commits yet
	}
	format := "--format=%H%x00%(trailers:key=" + trailerRun + ",valueonly,separator=%x01)%x00%(trailers:key=" +
		trailerStory + ",valueonly,separator=%x01)"
	out, err := g.git(ctx, nil, "log", format, "--all-match", "--fixed-strings",
		"--grep="+trailerRun+": "+req.RunID, "--grep="+trailerStory+": "+req.Story.Key)
	if err != nil {
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

// Commit stages the project's changes and commits them as the story's commit
// (an empty one when another story's commit already took every change).
func (g *Git) Commit(ctx context.Context, req CommitRequest) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// Untracked state is ignored through info/exclude; state someone once
	// committed is unstaged again, so it never rides along.
	if _, err := g.git(ctx, nil, append([]string{"add", "-A"}, g.pathspec(false)...)...); err != nil {
		return "", err
	}
	if tracked, err := g.git(ctx, nil, append([]string{"ls-files"}, g.statePathspec()...)...); err == nil && strings.TrimSpace(tracked) != "" {
		if _, err := g.git(ctx, nil, append([]string{"reset", "-q"}, g.statePathspec()...)...); err != nil {
			return "", err
		}
	}
	msg := strings.NewReader(commitMessage(req))
	if _, err := g.git(ctx, msg, "commit", "-q", "--allow-empty", "-F", "-"); err != nil {
		return "", err
	}
	out, err := g.git(ctx, nil, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

// git runs one git command in the project.
func (g *Git) git(ctx context.Context, stdin *strings.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", g.Root}, args...)...)
	cmd.Env = append(os.Environ(), g.env...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
