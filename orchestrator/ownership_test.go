package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

func TestOwnershipRule(t *testing.T) {
	t.Parallel()
	storyFiles := map[string]string{"stories/1-1.md": "1-1", "stories/1-2.md": "1-2"}
	listed := map[string][]string{"1-1": {"src/a.go", "src/both.go", "src/mine-busy.go"}, "1-2": {"src/b.go", "src/both.go"}}
	o := ownership{self: "1-1",
		status: "sprint-status.yaml",
		storyFile: func(p string) (string, bool) {
			k, ok := storyFiles[p]
			return k, ok
		},
		listedBy: func(k, p string) bool { return slices.Contains(listed[k], p) },
		claims: map[string][]string{"src/a.go": {"1-1", "1-2"}, "src/b.go": {"1-1", "1-2"}, "src/both.go": {"1-1", "1-2"},
			"src/unlisted.go": {"1-1", "1-2"}, "src/theirs.go": {"1-2"}, "stories/1-2.md": {"1-1"},
			"src/mine-busy.go": {"1-1"}, "src/unlisted-busy.go": {"1-1"}},
		// The running attempt started after the claimed changes, but before
		// the last writes to busy.go, new.go and the *-busy.go files.
		inflight: []Snapshot{{"fix.go": "1", "busy.go": "1", "src/a.go": "1", "src/b.go": "1", "src/both.go": "1",
			"src/unlisted.go": "1", "src/theirs.go": "1", "stories/1-1.md": "1", "stories/1-2.md": "1"}},
	}
	cases := map[string]bool{
		"sprint-status.yaml": false, // committed entry by entry, never whole
		"stories/1-1.md":     true,  // its own story file
		"stories/1-2.md":     false, // another story's story file, whoever changed it
		"src/a.go":           true,  // claimed by both, listed by this story
		"src/b.go":           false, // claimed by both, listed only by the other
		"src/both.go":        true,  // listed by both: the first to commit takes it
		"src/unlisted.go":    true,  // claimed by both, listed by neither: the first to commit takes it
		"src/theirs.go":      false, // only another story's sessions changed it
		"fix.go":             true,  // nobody's, unchanged since the running attempt started: a human's fix
		"busy.go":            false, // nobody's yet, but changed while an attempt runs
		"new.go":             false, // appeared while an attempt runs
		// Its sessions changed it, and so did the attempt running now (the
		// attempts overlapped): it goes in only when its File List names it.
		"src/mine-busy.go":     true,
		"src/unlisted-busy.go": false,
	}
	fps := map[string]string{"fix.go": "1", "busy.go": "2", "new.go": "1", "src/mine-busy.go": "2", "src/unlisted-busy.go": "2"}
	for path, want := range cases {
		fp := fps[path]
		if fp == "" {
			fp = "1"
		}
		if got := o.owns(path, fp); got != want {
			t.Errorf("owns(%s) = %v, want %v", path, got, want)
		}
	}
	o.inflight = nil
	if !o.owns("new.go", "1") {
		t.Error("with no attempt running, a change nobody claims goes to the story committing")
	}
}

func TestParallelStoriesCommitOnlyTheirOwnChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	h.project.retro["1"] = true
	h.project.statusFile = "sprint-status.yaml"
	h.project.repo = h.repo
	for _, k := range []string{"1-1", "1-2"} {
		h.project.set(k, func(s *StoryInfo) { s.FileList = []string{"src/" + k + ".go", "src/" + k + "_test.go"} })
	}
	wrote := map[string]chan struct{}{"1-1": make(chan struct{}), "1-2": make(chan struct{})}
	other := map[string]string{"1-1": "1-2", "1-2": "1-1"}
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		k := req.Story
		switch req.Step {
		case StepCreate:
			h.project.set(k, func(s *StoryInfo) { s.Files = []string{"stories/" + k + ".md"}; s.HasFile = true })
			h.repo.touch("stories/"+k+".md", "sprint-status.yaml")
		case StepDev:
			// Each dev session writes its code and waits for the other's, so
			// both attempts see both stories' writes.
			h.repo.touch("src/"+k+".go", "sprint-status.yaml")
			close(wrote[k])
			<-wrote[other[k]]
		case StepAutomate:
			h.repo.touch("src/" + k + "_test.go")
		}
		return StepResult{FinalState: FinalCompleted}
	}
	o := h.options()
	o.Parallel = 2
	if _, err := h.run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	files := h.repo.commitFiles()
	for _, k := range []string{"1-1", "1-2"} {
		want := []string{"sprint-status.yaml=entries of " + k, "src/" + k + ".go", "src/" + k + "_test.go", "stories/" + k + ".md"}
		got := files[k]
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("story %s's commit took %v, want %v", k, got, want)
		}
	}
	if snap, _ := h.repo.Snapshot(context.Background()); len(snap) != 0 {
		t.Errorf("left uncommitted: %v", snap.Paths())
	}
}

func TestChangesNobodyClaimedGoWithTheNextCommit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	h.project.retro["1"] = true
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Story == "1-1" && req.Step == StepReview {
			return StepResult{FinalState: FinalIncomplete}
		}
		h.repo.touch(fmt.Sprintf("src/%s-%s.go", req.Story, req.Step))
		return StepResult{FinalState: FinalCompleted}
	}
	h.policy.MaxCycles = 1
	if _, err := h.run(context.Background(), h.options()); err == nil {
		t.Fatal("the review should have escalated")
	}
	h.repo.touch("src/human-fix.go") // the human fixes what the review asked for
	h.steps.script = nil
	if _, err := h.resume(); err != nil {
		t.Fatal(err)
	}
	got := h.repo.commitFiles()["1-1"]
	if !slices.Contains(got, "src/human-fix.go") || !slices.Contains(got, "src/1-1-dev.go") {
		t.Fatalf("1.1's commit took %v", got)
	}
}

// The e2e flake of TestE2EParallelRunKeepsTheDependencyChainInOrder: story
// 1-2's dev session writes its code while 1-1's review attempt runs, so
// 1-1's attempt counts the file among its changes; 1-1 then commits while
// 1-2's dev attempt is still running (and before 1-2 claims the file). The
// file is 1-2's — its File List names it — and must go in 1-2's commit.
func TestAStoryLeavesAFileARunningAttemptOfAnotherWroteDuringItsOwn(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	h.project.retro["1"] = true
	reviewing, wrote, committed := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h.repo.afterCommit = func(req CommitRequest) {
		if req.Story.Key == "1-1" {
			close(committed)
		}
	}
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		switch {
		case req.Story == "1-1" && req.Step == StepDev:
			h.repo.touch("src/1-1.go")
			h.project.set("1-1", func(s *StoryInfo) { s.FileList = []string{"src/1-1.go"} })
		case req.Story == "1-1" && req.Step == StepReview:
			close(reviewing)
			<-wrote // 1-2's dev writes its code while this attempt runs
		case req.Story == "1-2" && req.Step == StepDev:
			<-reviewing
			h.repo.touch("src/1-2.go")
			h.project.set("1-2", func(s *StoryInfo) { s.FileList = []string{"src/1-2.go"} })
			close(wrote)
			<-committed // and runs on until 1-1 has committed
		}
		return StepResult{FinalState: FinalCompleted}
	}
	o := h.options()
	o.Parallel = 2
	if _, err := h.run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	files := h.repo.commitFiles()
	if got := files["1-1"]; !slices.Equal(got, []string{"src/1-1.go"}) {
		t.Errorf("1-1's commit took %v, want only its own src/1-1.go", got)
	}
	if got := files["1-2"]; !slices.Equal(got, []string{"src/1-2.go"}) {
		t.Errorf("1-2's commit took %v, want its src/1-2.go", got)
	}
}

// A story's steps run one after another: the tree listed when one attempt
// ends is the tree the next one starts from, so git is asked once between
// them, not twice. A new run lists it once to refuse uncommitted changes;
// then four agent steps and the commit list it six times (before the first
// step, after each, and for the commit), not nine.
func TestConsecutiveAttemptsShareTheSnapshotBetweenThem(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1")
	h.project.retro["1"] = true
	h.steps.verify = func(StepRequest) bool { return true }
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		h.repo.touch("src/" + req.Step + ".go")
		return StepResult{FinalState: FinalCompleted}
	}
	res := h.runOK()
	if res.Outcome != OutcomeDone {
		t.Fatalf("outcome %v", res.Outcome)
	}
	attempts := len(h.steps.requests())
	if want := 1 + 1 + attempts + 1; h.repo.snapshots != want {
		t.Fatalf("%d attempts listed the tree %d times, want %d", attempts, h.repo.snapshots, want)
	}
	want := []string{"src/automate.go", "src/create.go", "src/dev.go", "src/review.go"}
	if got := h.repo.commitFiles()["1-1"]; !slices.Equal(got, want) {
		t.Fatalf("the commit took %v, want %v", got, want)
	}
}

// The run's own writes (a story's done status, its commit) make the snapshot
// of the last attempt stale: the next story's first attempt lists the tree
// again, so the files the commit took are never counted as changed by the
// next story's session.
func TestACommitMakesTheNextAttemptListTheTreeAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "1-1", "1-2")
	h.project.retro["1"] = true
	h.steps.verify = func(StepRequest) bool { return true }
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev {
			h.repo.touch("src/" + req.Story + ".go")
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res := h.runOK()
	st := h.saved(res)
	for _, u := range st.Units {
		for _, p := range u.Paths {
			if u.Key == "1-2" && p == "src/1-1.go" {
				t.Fatalf("story 1-2's sessions are said to have changed %s, which 1-1's commit took: %v", p, u.Paths)
			}
		}
	}
	if got := h.repo.commitFiles(); !slices.Equal(got["1-1"], []string{"src/1-1.go"}) || !slices.Equal(got["1-2"], []string{"src/1-2.go"}) {
		t.Fatalf("commits took %v", got)
	}
}
