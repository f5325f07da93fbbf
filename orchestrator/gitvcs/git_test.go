package gitvcs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testtier"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
)

func TestGitCommitsTheProjectButNeverTheState(t *testing.T) {
	t.Parallel()
	root := gittest.Seed(t, map[string]string{"README.md": "hi\n", ".story-automator/workflow.yaml": "version: 1\n"})
	g := prepared(t, &Git{Root: root, StatePaths: []string{".story-automator/", ".claude/.story-automator-active"}})
	ctx := context.Background()
	if err := g.Prepare(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	exclude, _ := os.ReadFile(filepath.Join(root, ".git", "info", "exclude"))
	if strings.Count(string(exclude), "/.story-automator/") != 1 {
		t.Fatalf("info/exclude:\n%s", exclude)
	}
	gittest.Write(t, filepath.Join(root, ".story-automator", "runs", "run-1.md"), "state")
	gittest.Write(t, filepath.Join(root, ".claude", ".story-automator-active"), "{}")
	gittest.Write(t, filepath.Join(root, "src", ".main.go.tmp-123"), "half written")
	if snap, err := g.Snapshot(ctx); err != nil || len(snap) != 0 {
		t.Fatalf("state counted as a change: %v %v", snap, err)
	}
	gittest.Write(t, filepath.Join(root, "src", "main.go"), "package main\n")
	gittest.Write(t, filepath.Join(root, ".story-automator", "workflow.yaml"), "version: 1\n# tracked once, edited since\n")
	if snap, _ := g.Snapshot(ctx); !slices.Equal(snap.Paths(), []string{"src/main.go"}) {
		t.Fatalf("changes %v", snap.Paths())
	}
	req := orchestrator.CommitRequest{RunID: "run-1", Story: orchestrator.StoryInfo{Key: "1-2", Dotted: "1.2", Title: "Login"},
		Paths: []string{"src/main.go", ".story-automator/workflow.yaml", "gone.txt"}}
	if _, found, _ := g.Find(ctx, req); found {
		t.Fatal("found a commit before committing")
	}
	sha, err := g.Commit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(gittest.Git(t, root, "show", "--name-only", "--format=", sha))
	if !slices.Equal(files, []string{"src/main.go"}) {
		t.Fatalf("committed files %v", files)
	}
	if got, found, err := g.Find(ctx, req); err != nil || !found || got != sha {
		t.Fatalf("find %s %v %v, want %s", got, found, err, sha)
	}
	if subject := gittest.Git(t, root, "log", "-1", "--format=%s"); strings.TrimSpace(subject) != "story 1.2: Login" {
		t.Fatalf("subject %q", subject)
	}
}

func TestGitRefusesADirectoryThatIsNoRepository(t *testing.T) {
	t.Parallel()
	g := &Git{Root: t.TempDir()}
	if err := g.Prepare(context.Background()); !errors.Is(err, orchestrator.ErrNotGitRepo) {
		t.Fatalf("err %v", err)
	}
}

func TestGitFindMatchesTheStoryTrailerExactly(t *testing.T) {
	t.Parallel()
	root := gittest.Seed(t, map[string]string{"README.md": "hi\n"})
	g := prepared(t, &Git{Root: root})
	ctx := context.Background()
	ten := orchestrator.CommitRequest{RunID: "run-1", Story: orchestrator.StoryInfo{Key: "1-10", Dotted: "1.10"}}
	tenSHA, err := g.Commit(ctx, ten)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []orchestrator.CommitRequest{
		{RunID: "run-1", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}},
		{RunID: "run-", Story: orchestrator.StoryInfo{Key: "1-10", Dotted: "1.10"}},
	} {
		if sha, found, err := g.Find(ctx, req); err != nil || found {
			t.Fatalf("find %s/%s matched %s (%v): only exact trailers count", req.RunID, req.Story.Key, sha, err)
		}
	}
	if sha, found, err := g.Find(ctx, ten); err != nil || !found || sha != tenSHA {
		t.Fatalf("find 1-10: %s %v %v", sha, found, err)
	}
}

func TestGitCommitTakesOnlyTheRequestedPathsEvenWhenCancelled(t *testing.T) {
	t.Parallel()
	repo := gittest.Init(t)
	root := filepath.Join(repo, "project") // the project is a subdirectory of its repository
	gittest.Write(t, filepath.Join(root, "old.txt"), "old\n")
	gittest.Write(t, filepath.Join(root, "other.txt"), "other\n")
	gittest.Git(t, repo, "add", "-A")
	gittest.Git(t, repo, "commit", "-q", "-m", "init")
	g := prepared(t, &Git{Root: root})
	gittest.Write(t, filepath.Join(root, "mine", "new file.go"), "package mine\n")
	gittest.Write(t, filepath.Join(root, "theirs.go"), "package theirs\n")
	gittest.Write(t, filepath.Join(root, "other.txt"), "other, edited by an agent that staged it\n")
	gittest.Git(t, root, "add", "other.txt")
	if err := os.Remove(filepath.Join(root, "old.txt")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a SIGINT while committing must not kill git mid-commit
	sha, err := g.Commit(ctx, orchestrator.CommitRequest{RunID: "run-1", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"},
		Paths: []string{"mine/new file.go", "old.txt", "never-existed.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Split(strings.TrimSpace(gittest.Git(t, repo, "show", "--name-only", "--format=", sha)), "\n")
	if !slices.Equal(files, []string{"project/mine/new file.go", "project/old.txt"}) {
		t.Fatalf("committed files %q", files)
	}
	snap, err := g.Snapshot(context.Background())
	if err != nil || !slices.Equal(snap.Paths(), []string{"other.txt", "theirs.go"}) {
		t.Fatalf("left uncommitted: %v %v", snap.Paths(), err)
	}
	if staged := gittest.Git(t, root, "diff", "--cached", "--name-only"); strings.TrimSpace(staged) != "project/other.txt" {
		t.Fatalf("what the agent staged is no longer staged: %q", staged)
	}
}

func TestGitSnapshotChangesWhenAFileIsRewritten(t *testing.T) {
	t.Parallel()
	root := gittest.Init(t)
	g := prepared(t, &Git{Root: root})
	ctx := context.Background()
	gittest.Write(t, filepath.Join(root, "a.txt"), "one\n")
	gittest.Write(t, filepath.Join(root, "b.txt"), "one\n")
	before, err := g.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, filepath.Join(root, "a.txt"), "two, longer\n")
	gittest.Write(t, filepath.Join(root, "c.txt"), "new\n")
	if err := os.Remove(filepath.Join(root, "b.txt")); err != nil {
		t.Fatal(err)
	}
	after, err := g.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := orchestrator.Changed(before, after); !slices.Equal(got, []string{"a.txt", "b.txt", "c.txt"}) {
		t.Fatalf("changed %v", got)
	}
	if got := orchestrator.Changed(after, after); len(got) != 0 {
		t.Fatalf("no change reported %v", got)
	}
}

func TestGitCommitRecordsGivenContentAndKeepsTheWorkTreesOwn(t *testing.T) {
	t.Parallel()
	root := gittest.Seed(t, map[string]string{"status.yaml": "a: backlog\nb: backlog\n"})
	g := prepared(t, &Git{Root: root})
	ctx := context.Background()
	gittest.Write(t, filepath.Join(root, "status.yaml"), "a: done\nb: in-progress\n")
	data, ok, err := g.CommittedFile(ctx, "status.yaml")
	if err != nil || !ok || string(data) != "a: backlog\nb: backlog\n" {
		t.Fatalf("committed file %q %v %v", data, ok, err)
	}
	sha, err := g.Commit(ctx, orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1"},
		Contents: map[string][]byte{"status.yaml": []byte("a: done\nb: backlog\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Git(t, root, "show", sha+":status.yaml"); got != "a: done\nb: backlog\n" {
		t.Fatalf("committed %q", got)
	}
	if got := gittest.Read(t, filepath.Join(root, "status.yaml")); got != "a: done\nb: in-progress\n" {
		t.Fatalf("work tree %q", got)
	}
	if got := gittest.Git(t, root, "status", "--porcelain"); got != " M status.yaml\n" {
		t.Fatalf("status after the commit %q: the index must follow HEAD", got)
	}
	if _, ok, err := g.CommittedFile(ctx, "missing.yaml"); ok || err != nil {
		t.Fatalf("missing file: %v %v", ok, err)
	}
}

func TestGitPrepareStopsHidingTheWholeStateDirectory(t *testing.T) {
	t.Parallel()
	root := gittest.Init(t)
	exclude := filepath.Join(root, ".git", "info", "exclude")
	// What an earlier version wrote, after a line of the user's own.
	gittest.Write(t, exclude, "*.log\n# story-automator run state (never committed)\n/.story-automator/\n/.claude/.story-automator-active\n")
	prepared(t, &Git{Root: root, StatePaths: []string{".story-automator/runs/", ".claude/.story-automator-active"}})
	got := gittest.Read(t, exclude)
	want := "*.log\n# story-automator run state (never committed)\n/.claude/.story-automator-active\n" +
		"# story-automator run state (never committed)\n/.story-automator/runs/\n"
	if got != want {
		t.Fatalf("info/exclude:\n%s\nwant:\n%s", got, want)
	}
	gittest.Write(t, filepath.Join(root, ".story-automator", "workflow.yaml"), "version: 1\n")
	if status := gittest.Git(t, root, "status", "--porcelain", "--untracked-files=all"); !strings.Contains(status, ".story-automator/workflow.yaml") {
		t.Fatalf("the user's workflow.yaml is still hidden: %q", status)
	}
}

// prepared prepares g for a run and returns it.
func prepared(t *testing.T, g *Git) *Git {
	t.Helper()
	if err := g.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g
}

// subdirProject makes a repository whose project is its subdirectory "project".
func subdirProject(t *testing.T) (repo, root string) {
	t.Helper()
	repo = gittest.Init(t)
	root = filepath.Join(repo, "project")
	gittest.Write(t, filepath.Join(root, "status.yaml"), "a: backlog\n")
	gittest.Git(t, repo, "add", "-A")
	gittest.Git(t, repo, "commit", "-q", "-m", "init")
	return repo, root
}

func TestGitCommitRecordsGivenContentInASubdirectoryProject(t *testing.T) {
	t.Parallel()
	repo, root := subdirProject(t)
	g := prepared(t, &Git{Root: root})
	ctx := context.Background()
	sha, err := g.Commit(ctx, orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1"},
		Contents: map[string][]byte{"status.yaml": []byte("a: done\n")}})
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(gittest.Git(t, repo, "show", "--name-only", "--format=", sha))
	if !slices.Equal(files, []string{"project/status.yaml"}) {
		t.Fatalf("committed files %v", files)
	}
	if got := gittest.Git(t, repo, "show", sha+":project/status.yaml"); got != "a: done\n" {
		t.Fatalf("committed %q", got)
	}
}

func TestGitExcludesTheStateOfASubdirectoryProject(t *testing.T) {
	t.Parallel()
	repo, root := subdirProject(t)
	exclude := filepath.Join(repo, ".git", "info", "exclude")
	gittest.Write(t, exclude, "# story-automator run state (never committed)\n/project/.story-automator/\n")
	prepared(t, &Git{Root: root, StatePaths: []string{".story-automator/runs/", ".claude/.story-automator-active"}})
	gittest.Write(t, filepath.Join(root, ".story-automator", "runs", "run-1.md"), "state")
	gittest.Write(t, filepath.Join(root, ".claude", ".story-automator-active"), "{}")
	gittest.Write(t, filepath.Join(root, ".story-automator", "workflow.yaml"), "version: 1\n")
	status := gittest.Git(t, repo, "status", "--porcelain", "--untracked-files=all")
	if status != "?? project/.story-automator/workflow.yaml\n" {
		t.Fatalf("status %q: the state must be excluded, the user's workflow.yaml not\n%s", status, gittest.Read(t, exclude))
	}
}

func TestGitCommitKeepsACommitMadeByAnotherProcessMeanwhile(t *testing.T) {
	t.Parallel()
	repo, root := subdirProject(t)
	g := prepared(t, &Git{Root: root})
	ctx := context.Background()
	gittest.Write(t, filepath.Join(root, "mine.go"), "package mine\n")
	theirs := ""
	g.beforeCommit = func() { // another process commits after our index was built
		gittest.Write(t, filepath.Join(repo, "theirs.txt"), "theirs\n")
		gittest.Git(t, repo, "add", "theirs.txt")
		gittest.Git(t, repo, "commit", "-q", "-m", "theirs")
		theirs = strings.TrimSpace(gittest.Git(t, repo, "rev-parse", "HEAD"))
	}
	sha, err := g.Commit(ctx, orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"},
		Paths: []string{"mine.go"}, Contents: map[string][]byte{"status.yaml": []byte("a: done\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if head := strings.TrimSpace(gittest.Git(t, repo, "rev-parse", "HEAD")); head != sha {
		t.Fatalf("HEAD %s, commit %s", head, sha)
	}
	if parent := strings.TrimSpace(gittest.Git(t, repo, "rev-parse", sha+"^")); parent != theirs {
		t.Fatalf("parent %s, want their commit %s", parent, theirs)
	}
	files := strings.Fields(gittest.Git(t, repo, "ls-tree", "-r", "--name-only", sha))
	if !slices.Equal(files, []string{"project/mine.go", "project/status.yaml", "theirs.txt"}) {
		t.Fatalf("tree of our commit %v: their change was undone", files)
	}
	if got := gittest.Git(t, repo, "show", sha+":project/status.yaml"); got != "a: done\n" {
		t.Fatalf("committed %q", got)
	}
	if msg := gittest.Git(t, repo, "log", "-1", "--format=%B", sha); !strings.Contains(msg, trailerStory+": 1-1") {
		t.Fatalf("message %q", msg)
	}
	// The work tree keeps its own status.yaml; the index follows HEAD.
	if got := gittest.Git(t, repo, "status", "--porcelain"); got != " M project/status.yaml\n" {
		t.Fatalf("status after the commit %q: the index must follow HEAD", got)
	}
}

// CommittedFile and Find read HEAD in one git call each; an unborn branch,
// a directory and a file without a final newline each get the right answer.
func TestGitReadsTheLastCommitInOneCall(t *testing.T) {
	t.Parallel()
	root := gittest.Init(t)
	g := prepared(t, &Git{Root: root})
	ctx := context.Background()
	if _, ok, err := g.CommittedFile(ctx, "status.yaml"); ok || err != nil {
		t.Fatalf("no commit yet: %v %v", ok, err)
	}
	if _, found, err := g.Find(ctx, orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1"}}); found || err != nil {
		t.Fatalf("find with no commit yet: %v %v", found, err)
	}
	raw := "a: done\x00\nno final newline"
	gittest.Write(t, filepath.Join(root, "status.yaml"), raw)
	gittest.Write(t, filepath.Join(root, "docs", "x.md"), "x\n")
	gittest.Git(t, root, "add", "-A")
	gittest.Git(t, root, "commit", "-q", "-m", "init")
	if data, ok, err := g.CommittedFile(ctx, "status.yaml"); !ok || err != nil || string(data) != raw {
		t.Fatalf("committed file %q %v %v", data, ok, err)
	}
	if _, ok, err := g.CommittedFile(ctx, "docs"); ok || err != nil {
		t.Fatalf("a directory read as a file: %v %v", ok, err)
	}
	if _, ok, err := g.CommittedFile(ctx, "bad\nname"); ok || err == nil {
		t.Fatalf("a name with a line break: %v %v", ok, err)
	}
}

// gitLog puts a git on PATH that notes each call's subcommand (after -C
// and -c and their values) in a file
// before it runs the real one, and returns a function reading the notes.
func gitLog(t *testing.T) func() []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		testtier.Missing(t, "git is not installed")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := "#!/bin/sh\n" +
		`for a in "$@"; do case "$a" in -C|-c) skip=1;; *) if [ -n "$skip" ]; then skip=; else echo "$a" >> '` + log + `'; break; fi;; esac; done` + "\n" +
		`exec '` + real + `' "$@"` + "\n"
	gittest.Write(t, filepath.Join(dir, "git"), script)
	if err := os.Chmod(filepath.Join(dir, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		data, _ := os.ReadFile(log)
		_ = os.Remove(log)
		return strings.Fields(string(data))
	}
}

// A story's commit, given the changes its caller listed, asks git only what
// it must: no second status, the private index's path once per run, HEAD and
// its parent in one call.
func TestGitCommitRunsNoGitCallItCanDoWithout(t *testing.T) {
	root := gittest.Seed(t, map[string]string{"README.md": "hi\n"})
	calls := gitLog(t)
	g := prepared(t, &Git{Root: root})
	ctx := context.Background()
	calls()
	for i, story := range []string{"1-1", "1-2"} {
		path := "src/" + story + ".go"
		gittest.Write(t, filepath.Join(root, path), "package src\n")
		snap, err := g.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		calls()
		if _, err := g.Commit(ctx, orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: story}, Paths: []string{path}, Changed: snap}); err != nil {
			t.Fatal(err)
		}
		want := []string{"rev-parse", "rev-parse", "read-tree", "add", "commit", "rev-parse", "reset"}
		if i > 0 {
			want = slices.Delete(want, 1, 2) // the private index's path is known by now
		}
		if got := calls(); !slices.Equal(got, want) {
			t.Fatalf("commit %d ran git %v, want %v", i+1, got, want)
		}
	}
	if got := strings.Fields(gittest.Git(t, root, "show", "--name-only", "--format=", "HEAD")); !slices.Equal(got, []string{"src/1-2.go"}) {
		t.Fatalf("last commit holds %v", got)
	}
}

func TestARetrospectivesCommitIsTheEpics(t *testing.T) {
	t.Parallel()
	req := orchestrator.CommitRequest{RunID: "r", Retro: true, Story: orchestrator.StoryInfo{Key: "epic-1-retro", Epic: "1"}}
	if msg := commitMessage(req); !strings.HasPrefix(msg, "epic 1: retrospective\n") {
		t.Fatalf("retro commit message %q", msg)
	}
}
