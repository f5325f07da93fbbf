package bmad

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

const specFolder = "_bmad-output/specs/spec-auth"

const threeStories = `- id: "1"
  title: Sign up
  description: A person signs up.
  spec_checkpoint: true
  invoke_dev_with: "Use the existing mailer.\nKeep it small."
- id: "2-a"
  title: Log in
  description: A person logs in.
  done_checkpoint: true
- id: "3"
  title: Log out
  description: A person logs out.
  done_checkpoint: true
`

// storiesProject is a project without a board whose spec folder has three stories.
func storiesProject(t *testing.T) (string, Folder) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{artifactsDir, specFolder + "/stories"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, specFolder, "stories.yaml"), []byte(threeStories), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFolder(root, specFolder)
	if err != nil {
		t.Fatal(err)
	}
	return root, f
}

func writeStorySpec(t *testing.T, root, name, front, tail string) string {
	t.Helper()
	rel := specFolder + "/stories/" + name
	if err := os.WriteFile(filepath.Join(root, rel), []byte("---\n"+front+"---\n\n# story\n"+tail), 0o644); err != nil {
		t.Fatal(err)
	}
	return rel
}

func folderPipeline(root string, f Folder, g *fakeGit) BuildAuto {
	return BuildAuto{Root: root, Folder: &f, Git: func(string, string) StoryGit { return g }}
}

func storyDispatch(id string) orchestrator.StoryDispatch {
	return orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: id, Dotted: id}, Step: orchestrator.StepDev, Agent: "sim"}
}

// The folder is the backlog: its order, each story after the one before,
// a done spec done, the retrospective's target the folder, a story's spec
// known by its path; no board.
func TestFolderIsTheBacklog(t *testing.T) {
	root, f := storiesProject(t)
	writeStorySpec(t, root, "1-sign-up.md", "status: done\n", "")
	writeStorySpec(t, root, "2-a-unresolved.md", "status: done\n", "")
	got, err := f.Select("", "all")
	if err != nil || len(got) != 3 {
		t.Fatalf("select %v %v", got, err)
	}
	if got[0].Key != "1" || got[0].Status != orchestrator.StatusDone || len(got[0].DependsOn) != 0 ||
		got[1].Key != "2-a" || got[1].Status == orchestrator.StatusDone || got[1].DependsOn[0] != "1" ||
		got[2].DependsOn[0] != "2-a" || got[2].Epic != "spec-auth" || got[2].Title != "Log out" {
		t.Fatalf("stories %+v", got)
	}
	if f.RetroTarget("spec-auth") != specFolder || f.StatusFile() != "" || f.MarkStoryDone("1") != nil {
		t.Fatal("target, board")
	}
	if k, ok := f.StoryFileOwner(specFolder + "/stories/2-a-log-in.md"); !ok || k != "2-a" {
		t.Fatalf("owner %q %v", k, ok)
	}
	if _, ok := f.StoryFileOwner(specFolder + "/stories/9-x.md"); ok {
		t.Fatal("a file of no story has an owner")
	}
	if _, err := f.Story("9"); !errors.Is(err, workflows.ErrStoryNotFound) {
		t.Fatalf("unknown story: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, specFolder, "stories.yaml"), []byte("- id: 1\n  title: a\n  description: d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = OpenFolder(root, filepath.Join(root, specFolder))
	if workflows.Code(err) != "stories_invalid" || !strings.Contains(err.Error(), "stories.yaml:1:") {
		t.Fatalf("invalid: %v", err)
	}
}

// A story is sent by folder and id, halting after planning on a
// spec_checkpoint story's first leg, its invoke_dev_with after a newline;
// by its spec's path once known; nothing is committed before it.
func TestFolderDispatch(t *testing.T) {
	root, f := storiesProject(t)
	g := &fakeGit{head: "base1"}
	p := folderPipeline(root, f, g)
	got, err := p.Dispatch(context.Background(), storyDispatch("1"))
	want := "/bmad-build-auto Spec folder: " + specFolder + ". Story id: 1. Halt after planning.\nUse the existing mailer.\nKeep it small."
	if err != nil || got.Prompt != want || !got.Halt || got.Base != "base1" || len(g.commits) != 0 {
		t.Fatalf("dispatched %+v (%v), commits %v", got, err, g.commits)
	}
	d := storyDispatch("1")
	d.Base, d.Spec = "base1", writeStorySpec(t, root, "1-sign-up.md", "status: ready-for-dev\n", "")
	got, err = p.Dispatch(context.Background(), d)
	if err != nil || got.Prompt != "/bmad-build-auto "+d.Spec+"\nUse the existing mailer.\nKeep it small." || got.Halt || got.Base != "" {
		t.Fatalf("by path: %+v (%v)", got, err)
	}
	// Replanned: draft halts again.
	if err := workflows.SetSpecStatus(filepath.Join(root, d.Spec), workflows.SpecDraft); err != nil {
		t.Fatal(err)
	}
	if got, _ = p.Dispatch(context.Background(), d); !got.Halt || !strings.Contains(got.Prompt, d.Spec+" Halt after planning.") {
		t.Fatalf("draft: %+v", got)
	}
	got, err = p.Dispatch(context.Background(), storyDispatch("2-a"))
	if err != nil || got.Prompt != "/bmad-build-auto Spec folder: "+specFolder+". Story id: 2-a." || got.Halt {
		t.Fatalf("no checkpoint: %+v (%v)", got, err)
	}
	// A skeleton left from before escalates before any session.
	writeStorySpec(t, root, "3-unresolved.md", "status: blocked\n", "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: story id not found in stories.yaml\n")
	_, err = p.Dispatch(context.Background(), storyDispatch("3"))
	if b, ok := orchestrator.AsBlocker(err); !ok || !strings.Contains(b.Error(), specFolder+"/stories/3-unresolved.md") ||
		!strings.Contains(b.Action, "delete "+specFolder+"/stories/3-unresolved.md") || !strings.Contains(b.Error(), "story id not found in stories.yaml") {
		t.Fatalf("sentinel: %v", err)
	}
}

// The outcome finds the story's one spec and reads it as sprint mode does;
// a skeleton, two specs, or a plan to review stop the story.
func TestFolderOutcome(t *testing.T) {
	ctx := context.Background()
	completed := orchestrator.StepResult{FinalState: orchestrator.FinalCompleted}
	root, f := storiesProject(t)
	g := &fakeGit{msgs: []string{"work"}}
	p := folderPipeline(root, f, g)

	if out := p.Outcome(ctx, storyDispatch("1"), completed); out.FinalState != orchestrator.FinalIncomplete || out.Spec != "" {
		t.Fatalf("no spec: %+v", out)
	}
	rel := writeStorySpec(t, root, "1-sign-up.md", "status: ready-for-dev\n", "")
	d := storyDispatch("1")
	d.Halt = true
	out := p.Outcome(ctx, d, completed)
	if out.Spec != rel || out.Pause == nil || out.Pause.Code != CodePlanReview || !strings.Contains(out.Pause.Error(), rel) {
		t.Fatalf("plan review: %+v", out)
	}
	d.Spec, d.Halt = rel, false
	writeStorySpec(t, root, "1-sign-up.md", "status: done\nbaseline_revision: b0\n", "\n## Auto Run Result\n\nStatus: done\n")
	if out := p.Outcome(ctx, d, completed); out.FinalState != orchestrator.FinalCompleted || out.Spec != "" {
		t.Fatalf("done: %+v", out)
	}
	blocked := writeStorySpec(t, root, "2-a-log-in.md", "status: blocked\n", "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: unclear intent\n")
	out = p.Outcome(ctx, storyDispatch("2-a"), completed)
	if out.Blocker == nil || out.Blocker.Code != CodeBuildAutoBlocked || !strings.Contains(out.Blocker.Error(), blocked) || !strings.Contains(out.Blocker.Action, blocked) {
		t.Fatalf("blocked: %+v", out)
	}
	writeStorySpec(t, root, "3-ambiguous.md", "status: blocked\n", "\n## Auto Run Result\n\nBlocking condition: ambiguous story file match\n")
	out = p.Outcome(ctx, storyDispatch("3"), completed)
	if out.Blocker == nil || out.Spec != "" || !strings.Contains(out.Blocker.Error(), "3-ambiguous.md") || !strings.Contains(out.Blocker.Action, "Several specs") {
		t.Fatalf("sentinel: %+v", out)
	}
	writeStorySpec(t, root, "3-log-out.md", "status: draft\n", "")
	out = p.Outcome(ctx, storyDispatch("3"), completed)
	if out.Blocker == nil || out.Blocker.Code != CodeStorySpecAmbiguous || !strings.Contains(out.Blocker.Error(), "3-log-out.md") {
		t.Fatalf("two specs: %+v", out)
	}
}

// A story lands as one commit with its id and title; a done_checkpoint
// story pauses the run after it, unless it is the last.
func TestFolderLandAndDoneCheckpoint(t *testing.T) {
	root, f := storiesProject(t)
	g := &fakeGit{msgs: []string{"feat: log in"}}
	p := folderPipeline(root, f, g)
	d := storyDispatch("2-a")
	d.Base, d.Spec = "b0", writeStorySpec(t, root, "2-a-log-in.md", "status: done\nbaseline_revision: b1\n", "")
	req := &orchestrator.CommitRequest{RunID: "r", Story: d.Story}
	if err := p.Land(context.Background(), d, req); err != nil {
		t.Fatal(err)
	}
	if g.squashed == nil || g.squashed.Subject != "2-a: Log in" || !strings.Contains(g.squashed.Body, "feat: log in") || g.paths != nil {
		t.Fatalf("squashed %+v %v", g.squashed, g.paths)
	}
	b := p.AfterLanding(d)
	if b == nil || b.Code != CodeDoneReview || !strings.Contains(b.Error(), "2-a") || !strings.Contains(b.Action, "run --resume") {
		t.Fatalf("done checkpoint: %+v", b)
	}
	if p.AfterLanding(storyDispatch("3")) != nil || p.AfterLanding(storyDispatch("1")) != nil {
		t.Fatal("paused after the last story, or one without done_checkpoint")
	}
	if (BuildAuto{}).AfterLanding(d) != nil {
		t.Fatal("sprint mode paused")
	}
}

// Replan sets the story's spec back to draft; without a spec, or on a
// skeleton, it says why not.
func TestFolderReplan(t *testing.T) {
	root, f := storiesProject(t)
	p := folderPipeline(root, f, &fakeGit{})
	ctx := context.Background()
	if err := p.Replan(ctx, storyDispatch("1")); err == nil || !strings.Contains(err.Error(), "no spec yet") {
		t.Fatalf("no spec: %v", err)
	}
	rel := writeStorySpec(t, root, "1-sign-up.md", "status: ready-for-dev\n", "")
	if err := p.Replan(ctx, storyDispatch("1")); err != nil {
		t.Fatal(err)
	}
	if sp, _ := workflows.ReadSpec(filepath.Join(root, rel)); sp.Status != workflows.SpecDraft {
		t.Fatalf("status %q", sp.Status)
	}
	writeStorySpec(t, root, "3-unresolved.md", "status: blocked\n", "")
	if err := p.Replan(ctx, storyDispatch("3")); err == nil || !strings.Contains(err.Error(), "skeleton") {
		t.Fatalf("sentinel: %v", err)
	}
}
