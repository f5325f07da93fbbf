package bmad

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// sampleProject opens a fresh copy of the embedded sample BMAD project.
func sampleProject(t *testing.T) *workflows.Layout {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "p")
	if err := sample.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMarkStoryDoneMovesTheEpicAlong(t *testing.T) {
	p := sampleProject(t)
	b := Files{P: p}
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

func TestStoryInfoNamesTheStoryFilesAndTheirFileList(t *testing.T) {
	p := sampleProject(t)
	story := filepath.Join(p.ArtifactsDir, "1-2-greet-by-name.md")
	text := "# Story 1.2\n\nStatus: review\n\n## Dev Agent Record\n\n### File List\n\n- `src/name.go` (new)\n- src/name_test.go\n- ../outside.go\n\n" +
		"## Senior Developer Review (AI)\n\n- not/a/file.go\n"
	if err := os.WriteFile(story, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	b := Files{P: p}
	info, err := b.Story("1-2")
	if err != nil {
		t.Fatal(err)
	}
	rel := "_bmad-output/implementation-artifacts/1-2-greet-by-name.md"
	if !slices.Equal(info.Files, []string{rel}) || !slices.Equal(info.FileList, []string{"src/name.go", "src/name_test.go"}) {
		t.Fatalf("files %v, file list %v", info.Files, info.FileList)
	}
	// What a commit asks, path by path, agrees with the story's info.
	if got := b.FileList("1-2"); !slices.Equal(got, info.FileList) {
		t.Fatalf("FileList %v, want %v", got, info.FileList)
	}
	for path, want := range map[string]string{
		rel: "1-2",
		"_bmad-output/implementation-artifacts/stories/1-3-x.md":      "1-3",
		"_bmad-output/implementation-artifacts/1-2-greet-by-name.txt": "",
		"_bmad-output/implementation-artifacts/sprint-status.yaml":    "",
		"docs/1-2-greet-by-name.md":                                   "",
		"_bmad-output/implementation-artifacts/notes/1-2-a.md":        "",
	} {
		if key, ok := b.StoryFileOwner(path); key != want || ok != (want != "") {
			t.Errorf("StoryFileOwner(%s) = %q %v, want %q", path, key, ok, want)
		}
	}
}

func TestStatusForCommitTakesOnlyTheUnitsEntries(t *testing.T) {
	p := sampleProject(t)
	b := Files{P: p}
	if got := b.StatusFile(); got != "_bmad-output/implementation-artifacts/sprint-status.yaml" {
		t.Fatalf("status file %s", got)
	}
	committed, err := os.ReadFile(p.SprintStatusPath())
	if err != nil {
		t.Fatal(err)
	}
	for key, status := range map[string]string{"1-1": "done", "1-2": "in-progress"} {
		k, _ := workflows.ParseStoryKey(key)
		if err := p.SetStoryStatus(k, status); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.syncEpicStatus("1"); err != nil {
		t.Fatal(err)
	}
	data, err := b.StatusForCommit(committed, "1-1", "1", false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := workflows.ParseSprintStatus("x", data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"1-1-greet-the-world": "done", "epic-1": "in-progress"}
	for _, e := range got.Entries() {
		before, _ := workflows.ParseSprintStatus("x", committed)
		old := ""
		for _, b := range before.Entries() {
			if b.Key == e.Key {
				old = b.Status
			}
		}
		if w, ok := want[e.Key]; ok && e.Status != w || !ok && e.Status != old {
			t.Errorf("%s: %s (committed %s)", e.Key, e.Status, old)
		}
	}
	if whole, err := b.StatusForCommit(nil, "1-1", "1", false); err != nil || !strings.Contains(string(whole), "1-2-greet-by-name: in-progress") {
		t.Fatalf("never committed: the whole file is the unit's: %v\n%s", err, whole)
	}
}

func TestParallelStoriesFinishingTogetherLeaveTheEpicDone(t *testing.T) {
	p := sampleProject(t)
	stories, err := Files{P: p}.EpicStories("1")
	if err != nil || len(stories) < 2 {
		t.Fatalf("%v %v", stories, err)
	}
	for _, s := range stories[:len(stories)-2] {
		if err := (Files{P: p}).MarkStoryDone(s.Key); err != nil {
			t.Fatal(err)
		}
	}
	a, b := stories[len(stories)-2].Key, stories[len(stories)-1].Key
	// Story a has read its epic's stories (b not done yet) when b finishes
	// entirely; a's epic update comes last.
	racing := Files{P: p, beforeEpicSync: func() {
		if err := (Files{P: p}).MarkStoryDone(b); err != nil {
			t.Error(err)
		}
	}}
	if err := racing.MarkStoryDone(a); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(p.ArtifactsDir, workflows.SprintStatusFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "epic-1: done") {
		t.Fatalf("every story is done but the epic is not:\n%s", data)
	}
}

func TestBMADProjectSweepsSprintStatusAndStoryTemps(t *testing.T) {
	dir := t.TempDir()
	p := Files{P: &workflows.Layout{Root: dir, ArtifactsDir: dir}}
	for _, n := range []string{".sprint-status.yaml.tmp-1", ".1-2-greet.md.tmp-22", ".notes.md.tmp-3", ".sprint-status.yaml.tmp-x"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed := p.SweepTemps()
	if len(removed) != 2 {
		t.Fatalf("removed %v", removed)
	}
	for _, n := range []string{".notes.md.tmp-3", ".sprint-status.yaml.tmp-x"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Fatalf("%s removed", n)
		}
	}
}
