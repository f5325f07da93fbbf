package wire

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

const oneStory = "- id: \"1\"\n  title: a\n  description: d\n"

func storiesLayout(t *testing.T, files map[string]string) (*workflows.Layout, orchestrator.Options) {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, workflows.DefaultArtifactsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proj, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return proj, orchestrator.Options{ProjectRoot: root, Getenv: func(string) string { return "" }}
}

func codeOf(err error) string {
	var c *coded.Error
	if errors.As(err, &c) {
		return c.Code
	}
	return ""
}

// Without --spec and without a board, the one spec folder is found; two
// are refused with their list and an action naming --spec; a board means
// sprint mode; --spec names one, relative or absolute.
func TestStoriesFolderDiscovery(t *testing.T) {
	proj, o := storiesLayout(t, map[string]string{"_bmad-output/specs/spec-a/stories.yaml": oneStory})
	f, err := StoriesFolder(o, proj)
	if err != nil || f == nil || f.Rel() != "_bmad-output/specs/spec-a" || len(f.Stories) != 1 {
		t.Fatalf("one folder: %+v %v", f, err)
	}

	proj, o = storiesLayout(t, map[string]string{"_bmad-output/specs/spec-a/stories.yaml": oneStory,
		"_bmad-output/planning-artifacts/spec-b/stories.yaml": oneStory})
	_, err = StoriesFolder(o, proj)
	var c *coded.Error
	if !errors.As(err, &c) || c.Code != "spec_folder_ambiguous" || !strings.Contains(c.Message, "_bmad-output/specs/spec-a") ||
		!strings.Contains(c.Message, "_bmad-output/planning-artifacts/spec-b") || !strings.Contains(c.Action, "--spec") {
		t.Fatalf("two folders: %v", err)
	}
	o.Spec = "_bmad-output/planning-artifacts/spec-b"
	if f, err = StoriesFolder(o, proj); err != nil || f.Rel() != o.Spec {
		t.Fatalf("--spec: %+v %v", f, err)
	}
	o.Spec = filepath.Join(o.ProjectRoot, "_bmad-output/specs/spec-a")
	if f, err = StoriesFolder(o, proj); err != nil || f.Rel() != "_bmad-output/specs/spec-a" {
		t.Fatalf("--spec absolute: %+v %v", f, err)
	}
	o.Spec = "nowhere"
	if _, err = StoriesFolder(o, proj); codeOf(err) != CodeStoriesNotFound {
		t.Fatalf("--spec without stories.yaml: %v", err)
	}

	proj, o = storiesLayout(t, map[string]string{"_bmad-output/specs/spec-a/stories.yaml": oneStory,
		workflows.DefaultArtifactsDir + "/sprint-status.yaml": "development_status:\n  epic-1: backlog\n"})
	if f, err = StoriesFolder(o, proj); err != nil || f != nil {
		t.Fatalf("board: %+v %v", f, err)
	}
}

// A broken stories.yaml is stories_invalid with its file, line and rule.
func TestStoriesFolderInvalid(t *testing.T) {
	proj, o := storiesLayout(t, map[string]string{"specs/x/stories.yaml": "- id: \"1\"\n  title: a\n  description: d\n  status: done\n"})
	o.Spec = "specs/x"
	_, err := StoriesFolder(o, proj)
	var c *coded.Error
	if !errors.As(err, &c) || c.Code != "stories_invalid" || !strings.Contains(c.Message, "stories.yaml:4: no status field") || c.Action == "" {
		t.Fatalf("err %v", err)
	}
}

// Stories mode takes the build-auto pipeline alone, one story at a time in
// the project's tree, and says so; the folder is recorded for --resume.
func TestStoriesModeSettlesTheRun(t *testing.T) {
	proj, o := storiesLayout(t, map[string]string{"specs/x/stories.yaml": oneStory})
	o.Spec = "specs/x"
	f, err := StoriesFolder(o, proj)
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	p := Process{Log: zerolog.New(&logged)}
	choice := workflows.PipelineChoice{Pipeline: workflows.PipelineBuildAuto, Why: "skills"}
	o.Parallel, o.Spec = 3, ""
	got, err := storiesMode(o, &choice, f, p)
	if err != nil || got.Parallel != 1 || got.Spec != "specs/x" || !strings.Contains(choice.String(), "stories mode, folder specs/x") ||
		!strings.Contains(logged.String(), "stories mode runs one story at a time") {
		t.Fatalf("%+v %v %s %s", got, err, choice, logged.String())
	}
	five := workflows.PipelineChoice{Pipeline: workflows.PipelineFiveStep, Why: "no worker"}
	if _, err := storiesMode(o, &five, f, p); codeOf(err) != CodeStoriesNeedWorker {
		t.Fatalf("five-step: %v", err)
	}
	o.Isolate = orchestrator.IsolateWorktree
	if _, err := storiesMode(o, &choice, f, p); err == nil {
		t.Fatal("worktrees accepted")
	}
	o.Isolate, o.Stories = "", "1-2"
	if _, err := storiesMode(o, &choice, f, p); err == nil || !strings.Contains(err.Error(), "drop --epic and --stories") {
		t.Fatalf("--stories: %v", err)
	}
}
