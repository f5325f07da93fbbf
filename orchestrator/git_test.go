package orchestrator

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	mustGit(t, root, "init", "-q")
	return root
}

func mustGit(t *testing.T, root string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGitCommitsTheProjectButNeverTheState(t *testing.T) {
	root := gitRepo(t)
	write(t, filepath.Join(root, "README.md"), "hi\n")
	write(t, filepath.Join(root, ".story-automator", "workflow.yaml"), "version: 1\n")
	mustGit(t, root, "add", "README.md", ".story-automator/workflow.yaml")
	mustGit(t, root, "commit", "-q", "-m", "init")
	g := &Git{Root: root, StatePaths: []string{".story-automator/", ".claude/.story-automator-active"}}
	ctx := context.Background()
	if err := g.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Prepare(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	exclude, _ := os.ReadFile(filepath.Join(root, ".git", "info", "exclude"))
	if strings.Count(string(exclude), "/.story-automator/") != 1 {
		t.Fatalf("info/exclude:\n%s", exclude)
	}
	write(t, filepath.Join(root, ".story-automator", "runs", "run-1.md"), "state")
	write(t, filepath.Join(root, ".claude", ".story-automator-active"), "{}")
	write(t, filepath.Join(root, "src", ".main.go.tmp-123"), "half written")
	if dirty, err := g.Dirty(ctx); err != nil || len(dirty) != 0 {
		t.Fatalf("state counted as dirty: %v %v", dirty, err)
	}
	write(t, filepath.Join(root, "src", "main.go"), "package main\n")
	write(t, filepath.Join(root, ".story-automator", "workflow.yaml"), "version: 1\n# tracked once, edited since\n")
	if dirty, _ := g.Dirty(ctx); !slices.Equal(dirty, []string{"src/main.go"}) {
		t.Fatalf("dirty %v", dirty)
	}
	req := CommitRequest{RunID: "run-1", Story: StoryInfo{Key: "1-2", Dotted: "1.2", Title: "Login"}}
	if _, found, _ := g.Find(ctx, req); found {
		t.Fatal("found a commit before committing")
	}
	sha, err := g.Commit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(mustGit(t, root, "show", "--name-only", "--format=", sha))
	if !slices.Equal(files, []string{"src/main.go"}) {
		t.Fatalf("committed files %v", files)
	}
	if got, found, err := g.Find(ctx, req); err != nil || !found || got != sha {
		t.Fatalf("find %s %v %v, want %s", got, found, err, sha)
	}
	if subject := mustGit(t, root, "log", "-1", "--format=%s"); strings.TrimSpace(subject) != "story 1.2: Login" {
		t.Fatalf("subject %q", subject)
	}
}

func TestGitRefusesADirectoryThatIsNoRepository(t *testing.T) {
	g := &Git{Root: t.TempDir()}
	if err := g.Prepare(context.Background()); !errors.Is(err, ErrNotGitRepo) {
		t.Fatalf("err %v", err)
	}
}

func TestGitFindMatchesTheStoryTrailerExactly(t *testing.T) {
	root := gitRepo(t)
	write(t, filepath.Join(root, "README.md"), "hi\n")
	mustGit(t, root, "add", "README.md")
	mustGit(t, root, "commit", "-q", "-m", "init")
	g := &Git{Root: root}
	ctx := context.Background()
	if err := g.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	ten := CommitRequest{RunID: "run-1", Story: StoryInfo{Key: "1-10", Dotted: "1.10"}}
	tenSHA, err := g.Commit(ctx, ten)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []CommitRequest{
		{RunID: "run-1", Story: StoryInfo{Key: "1-1", Dotted: "1.1"}},
		{RunID: "run-", Story: StoryInfo{Key: "1-10", Dotted: "1.10"}},
	} {
		if sha, found, err := g.Find(ctx, req); err != nil || found {
			t.Fatalf("find %s/%s matched %s (%v): only exact trailers count", req.RunID, req.Story.Key, sha, err)
		}
	}
	if sha, found, err := g.Find(ctx, ten); err != nil || !found || sha != tenSHA {
		t.Fatalf("find 1-10: %s %v %v", sha, found, err)
	}
}
