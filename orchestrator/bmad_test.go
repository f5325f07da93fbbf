package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

func TestMarkStoryDoneMovesTheEpicAlong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if err := sample.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := BMADProject{P: p}
	epicStatus := func() string {
		data, _ := os.ReadFile(filepath.Join(p.ArtifactsDir, workflows.SprintStatusFile))
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == "epic-1" {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	stories, err := b.EpicStories("1")
	if err != nil || len(stories) < 2 {
		t.Fatalf("%v %v", stories, err)
	}
	if err := b.MarkStoryDone(stories[0].Key); err != nil {
		t.Fatal(err)
	}
	if got := epicStatus(); got != workflows.StatusInProgress {
		t.Fatalf("after the first story epic-1 = %q, want in-progress", got)
	}
	for _, s := range stories[1:] {
		if err := b.MarkStoryDone(s.Key); err != nil {
			t.Fatal(err)
		}
	}
	if got := epicStatus(); got != workflows.StatusDone {
		t.Fatalf("after every story epic-1 = %q, want done", got)
	}
}
