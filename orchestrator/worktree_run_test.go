package orchestrator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// worktreeRun is the sample BMAD project under git with story 1.1 done, so
// that 1.2 and 1.4 (which both need only 1.1) can run side by side, and a
// ten-line shared.txt both may edit.
func worktreeRun(t *testing.T) (*harness, Deps) {
	t.Helper()
	h := newHarness(t)
	root := gitRepo(t)
	h.root = root
	if err := sample.WriteSample(root); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := (BMADProject{P: p}).MarkStoryDone("1-1"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "shared.txt"), "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	mustGit(t, root, "add", "-A")
	mustGit(t, root, "commit", "-q", "-m", "planned")
	d := Deps{Project: BMADProject{P: p}, Steps: h.steps, Clock: h.clock, Report: DiscardReporter{}, Log: zerolog.Nop(),
		Repo: &Git{Root: root, StatePaths: []string{".story-automator/", ".claude/.story-automator-active"}}}
	return h, d
}

// editLine is a dev step that replaces line n of shared.txt in its worktree.
func editLine(t *testing.T, req StepRequest, n int, text string) {
	t.Helper()
	if req.WorkDir == "" {
		t.Errorf("%s %s ran without a worktree", req.Story, req.Step)
		return
	}
	p := filepath.Join(req.WorkDir, "shared.txt")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Error(err)
		return
	}
	lines := strings.Split(string(data), "\n")
	lines[n-1] = text
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Error(err)
	}
}

func worktreeOptions(h *harness) Options {
	o := h.options()
	o.Epic, o.Stories, o.Parallel = "1", "2,4", 2
	return o
}

func TestWorktreeRunLandsTwoStoriesEditingOneFile(t *testing.T) {
	h, d := worktreeRun(t)
	lines := map[string]int{"1-2": 2, "1-4": 9}
	// git keeps one stash per repository (refs/stash is not one of the
	// per-worktree refs): two worktrees stashing at the same moment can pop
	// each other's changes. An agent's stash-and-pop is one step here.
	var stash sync.Mutex
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev {
			// The other story's worktree is another folder.
			editLine(t, req, lines[strings.ReplaceAll(req.Story, ".", "-")], "story "+req.Story[:3])
			stash.Lock()
			mustGit(t, req.WorkDir, "stash")
			mustGit(t, req.WorkDir, "stash", "pop")
			stash.Unlock()
		}
		return StepResult{FinalState: FinalCompleted}
	}
	base := strings.TrimSpace(mustGit(t, h.root, "rev-parse", "HEAD"))
	res, err := Run(context.Background(), worktreeOptions(h), d)
	if err != nil {
		t.Fatal(err)
	}
	if got := readTestFile(t, filepath.Join(h.root, "shared.txt")); !strings.Contains(got, "story 1-2") || !strings.Contains(got, "story 1-4") {
		t.Fatalf("shared.txt lacks a story:\n%s", got)
	}
	if n := strings.TrimSpace(mustGit(t, h.root, "rev-list", "--count", base+"..HEAD")); n != "2" {
		t.Fatalf("%s commits, want one a story", n)
	}
	status := readTestFile(t, filepath.Join(h.root, "_bmad-output", "implementation-artifacts", "sprint-status.yaml"))
	for _, k := range []string{"1-2-greet-by-name: done", "1-4-farewell: done"} {
		if !strings.Contains(status, k) {
			t.Fatalf("sprint-status.yaml lacks %q:\n%s", k, status)
		}
	}
	if list := mustGit(t, h.root, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
	if br := mustGit(t, h.root, "branch", "--list", "story-automator/*"); br != "" {
		t.Fatalf("branches left: %s", br)
	}
	for _, u := range h.saved(res).Units {
		if u.Worktree != "" {
			t.Fatalf("%s still names worktree %s", u.Key, u.Worktree)
		}
	}
}

func TestWorktreeRunConflictEscalatesThenResumes(t *testing.T) {
	h, d := worktreeRun(t)
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Step == StepDev {
			editLine(t, req, 5, "story "+req.Story[:3])
		}
		return StepResult{FinalState: FinalCompleted}
	}
	res, err := Run(context.Background(), worktreeOptions(h), d)
	if Code(err) != "run_escalated" {
		t.Fatalf("err = %v, want the run escalated", err)
	}
	st := h.saved(res)
	if st.Escalation == nil || st.Escalation.Code != CodeMergeConflict || !strings.Contains(st.Escalation.Reason, "shared.txt") {
		t.Fatalf("escalation %+v, want merge_conflict naming shared.txt", st.Escalation)
	}
	u := st.Unit(st.Escalation.Unit)
	if u == nil {
		u = st.Unit(strings.ReplaceAll(st.Escalation.Unit, ".", "-"))
	}
	if u == nil || u.Worktree == "" {
		t.Fatalf("the conflicting story does not name its worktree: %+v", u)
	}
	if st := mustGit(t, h.root, "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Fatalf("the user's tree holds a half merge: %s", st)
	}
	// The user resolves it in the kept worktree.
	mustGit(t, u.Worktree, "reset", "-q", "--hard", strings.TrimSpace(mustGit(t, h.root, "rev-parse", "HEAD")))
	write(t, filepath.Join(u.Worktree, "shared.txt"), readTestFile(t, filepath.Join(h.root, "shared.txt"))+"resolved\n")
	h.steps.script = nil
	o := h.options()
	o.Resume, o.Stories = true, ""
	if _, err := Run(context.Background(), o, d); err != nil {
		t.Fatal(err)
	}
	if got := readTestFile(t, filepath.Join(h.root, "shared.txt")); !strings.Contains(got, "resolved") {
		t.Fatalf("shared.txt:\n%s", got)
	}
	if list := mustGit(t, h.root, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
}

func TestWorktreeRunResumeRemovesTheWorktreeOfALandedStory(t *testing.T) {
	h, d := worktreeRun(t)
	res, err := Run(context.Background(), worktreeOptions(h), d)
	if err != nil {
		t.Fatal(err)
	}
	// As a run killed between landing 1.2 and removing its worktree leaves it.
	st := h.saved(res)
	u := st.Unit("1-2")
	if u == nil {
		for _, x := range st.Units {
			if strings.HasPrefix(x.Key, "1-2") {
				u = x
			}
		}
	}
	w := &Worktrees{Project: d.Repo.(*Git), Run: res.State.RunID}
	dir, err := w.Add(context.Background(), u.Key, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	u.Worktree, st.Status = dir, RunRunning
	if err := SaveState(res.StatePath, st); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(h.store().Path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	o := h.options()
	o.Resume, o.Stories = true, ""
	if _, err := Run(context.Background(), o, d); err != nil {
		t.Fatal(err)
	}
	if list := mustGit(t, h.root, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
	if br := mustGit(t, h.root, "branch", "--list", "story-automator/*"); br != "" {
		t.Fatalf("branches left: %s", br)
	}
}
