package status

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

func writeProjectFile(t *testing.T, root, rel, text string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Status says stories mode and the folder: the latest run's, else the one
// a run would find; a board, or two folders, say nothing.
func TestStoriesMode(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, workflows.DefaultArtifactsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := StoriesMode(root, nil); got != "" {
		t.Fatalf("no folder: %q", got)
	}
	writeProjectFile(t, root, "_bmad-output/specs/a/stories.yaml", "- id: \"1\"\n  title: a\n  description: d\n")
	if got := StoriesMode(root, nil); got != "stories mode, folder _bmad-output/specs/a" {
		t.Fatalf("found: %q", got)
	}
	run := &orchestrator.State{Config: orchestrator.RunConfig{Spec: "elsewhere/b"}}
	if got := StoriesMode(root, run); got != "stories mode, folder elsewhere/b" {
		t.Fatalf("the run's: %q", got)
	}
	writeProjectFile(t, root, "_bmad-output/specs/c/stories.yaml", "- id: \"1\"\n  title: a\n  description: d\n")
	if got := StoriesMode(root, nil); got != "" {
		t.Fatalf("two folders: %q", got)
	}
	writeProjectFile(t, root, workflows.DefaultArtifactsDir+"/sprint-status.yaml", "development_status: {}\n")
	if got := StoriesMode(root, &orchestrator.State{}); got != "" {
		t.Fatalf("board: %q", got)
	}
}
