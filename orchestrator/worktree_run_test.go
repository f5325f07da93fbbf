package orchestrator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/orchestrator/gitvcs/gittest"
	"github.com/story-automator/story-automator/orchestrator/wire"
	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// worktreeRun is the sample BMAD project under git with story 1.1 done, so
// that 1.2 and 1.4 (which both need only 1.1) can run side by side, and a
// ten-line shared.txt both may edit.
func worktreeRun(t *testing.T) (*orchestrator.Harness, orchestrator.Deps) {
	t.Helper()
	h := orchestrator.NewHarness(t)
	root := gittest.Init(t)
	h.SetRoot(root)
	if err := sample.WriteSample(root); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := (bmad.Files{P: p}).MarkStoryDone("1-1"); err != nil {
		t.Fatal(err)
	}
	gittest.Write(t, filepath.Join(root, "shared.txt"), "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
	gittest.Git(t, root, "add", "-A")
	gittest.Git(t, root, "commit", "-q", "-m", "planned")
	d := h.Deps()
	repo := &gitvcs.Git{Root: root, StatePaths: []string{".story-automator/", ".claude/.story-automator-active"}}
	project := bmad.Files{P: p}
	d.Backlog, d.Repo, d.Worktrees = project, repo, wire.Worktrees(repo, project)
	return h, d
}

// editLine is a dev step that replaces line n of shared.txt in its worktree.
func editLine(t *testing.T, req orchestrator.StepRequest, n int, text string) {
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

func worktreeOptions(h *orchestrator.Harness) orchestrator.Options {
	o := h.Options()
	o.Epic, o.Stories, o.Parallel = "1", "2,4", 2
	return o
}

func TestWorktreeRunLandsTwoStoriesEditingOneFile(t *testing.T) {
	t.Parallel()
	h, d := worktreeRun(t)
	lines := map[string]int{"1-2": 2, "1-4": 9}
	// git keeps one stash per repository (refs/stash is not one of the
	// per-worktree refs): two worktrees stashing at the same moment can pop
	// each other's changes. An agent's stash-and-pop is one step here.
	var stash sync.Mutex
	h.SetScript(func(_ context.Context, req orchestrator.StepRequest) orchestrator.StepResult {
		if req.Step == orchestrator.StepDev {
			// The other story's worktree is another folder.
			editLine(t, req, lines[strings.ReplaceAll(req.Story, ".", "-")], "story "+req.Story[:3])
			stash.Lock()
			gittest.Git(t, req.WorkDir, "stash")
			gittest.Git(t, req.WorkDir, "stash", "pop")
			stash.Unlock()
		}
		return orchestrator.StepResult{FinalState: orchestrator.FinalCompleted}
	})
	base := strings.TrimSpace(gittest.Git(t, h.Root(), "rev-parse", "HEAD"))
	res, err := orchestrator.Run(context.Background(), worktreeOptions(h), d)
	if err != nil {
		t.Fatal(err)
	}
	if got := gittest.Read(t, filepath.Join(h.Root(), "shared.txt")); !strings.Contains(got, "story 1-2") || !strings.Contains(got, "story 1-4") {
		t.Fatalf("shared.txt lacks a story:\n%s", got)
	}
	if n := strings.TrimSpace(gittest.Git(t, h.Root(), "rev-list", "--count", base+"..HEAD")); n != "2" {
		t.Fatalf("%s commits, want one a story", n)
	}
	status := gittest.Read(t, filepath.Join(h.Root(), "_bmad-output", "implementation-artifacts", "sprint-status.yaml"))
	for _, k := range []string{"1-2-greet-by-name: done", "1-4-farewell: done"} {
		if !strings.Contains(status, k) {
			t.Fatalf("sprint-status.yaml lacks %q:\n%s", k, status)
		}
	}
	if list := gittest.Git(t, h.Root(), "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
	if br := gittest.Git(t, h.Root(), "branch", "--list", "story-automator/*"); br != "" {
		t.Fatalf("branches left: %s", br)
	}
	for _, u := range h.Saved(res).Units {
		if u.Worktree != "" {
			t.Fatalf("%s still names worktree %s", u.Key, u.Worktree)
		}
	}
}

func TestWorktreeRunConflictEscalatesThenResumes(t *testing.T) {
	t.Parallel()
	h, d := worktreeRun(t)
	h.SetScript(func(_ context.Context, req orchestrator.StepRequest) orchestrator.StepResult {
		if req.Step == orchestrator.StepDev {
			editLine(t, req, 5, "story "+req.Story[:3])
		}
		return orchestrator.StepResult{FinalState: orchestrator.FinalCompleted}
	})
	res, err := orchestrator.Run(context.Background(), worktreeOptions(h), d)
	if orchestrator.Code(err) != "run_escalated" {
		t.Fatalf("err = %v, want the run escalated", err)
	}
	st := h.Saved(res)
	if st.Escalation == nil || st.Escalation.Code != orchestrator.CodeMergeConflict || !strings.Contains(st.Escalation.Reason, "shared.txt") {
		t.Fatalf("escalation %+v, want merge_conflict naming shared.txt", st.Escalation)
	}
	u := st.Unit(st.Escalation.Unit)
	if u == nil {
		u = st.Unit(strings.ReplaceAll(st.Escalation.Unit, ".", "-"))
	}
	if u == nil || u.Worktree == "" {
		t.Fatalf("the conflicting story does not name its worktree: %+v", u)
	}
	if st := gittest.Git(t, h.Root(), "status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Fatalf("the user's tree holds a half merge: %s", st)
	}
	// The user resolves it in the kept worktree.
	gittest.Git(t, u.Worktree, "reset", "-q", "--hard", strings.TrimSpace(gittest.Git(t, h.Root(), "rev-parse", "HEAD")))
	gittest.Write(t, filepath.Join(u.Worktree, "shared.txt"), gittest.Read(t, filepath.Join(h.Root(), "shared.txt"))+"resolved\n")
	h.SetScript(nil)
	o := h.Options()
	o.Resume, o.Stories = true, ""
	if _, err := orchestrator.Run(context.Background(), o, d); err != nil {
		t.Fatal(err)
	}
	if got := gittest.Read(t, filepath.Join(h.Root(), "shared.txt")); !strings.Contains(got, "resolved") {
		t.Fatalf("shared.txt:\n%s", got)
	}
	if list := gittest.Git(t, h.Root(), "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
}

func TestWorktreeRunResumeRemovesTheWorktreeOfALandedStory(t *testing.T) {
	t.Parallel()
	h, d := worktreeRun(t)
	res, err := orchestrator.Run(context.Background(), worktreeOptions(h), d)
	if err != nil {
		t.Fatal(err)
	}
	// As a run killed between landing 1.2 and removing its worktree leaves it.
	st := h.Saved(res)
	u := st.Unit("1-2")
	if u == nil {
		for _, x := range st.Units {
			if strings.HasPrefix(x.Key, "1-2") {
				u = x
			}
		}
	}
	w := d.Repo.(*gitvcs.Git).Worktrees(res.State.RunID, "", nil)
	dir, err := w.Add(context.Background(), u.Key, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	u.Worktree, st.Status = dir, orchestrator.RunRunning
	if err := orchestrator.SaveState(res.StatePath, st); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(h.Store().Path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	o := h.Options()
	o.Resume, o.Stories = true, ""
	if _, err := orchestrator.Run(context.Background(), o, d); err != nil {
		t.Fatal(err)
	}
	if list := gittest.Git(t, h.Root(), "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
	if br := gittest.Git(t, h.Root(), "branch", "--list", "story-automator/*"); br != "" {
		t.Fatalf("branches left: %s", br)
	}
}

// reportFunc is a Reporter that calls a function.
type reportFunc func(orchestrator.Event)

func (f reportFunc) Report(ev orchestrator.Event) { f(ev) }

// addWave adds story 1.5, which depends on nothing, to the sample of
// worktreeRun and commits it.
func addWave(t *testing.T, root string) {
	t.Helper()
	epics := filepath.Join(root, "_bmad-output", "planning-artifacts", "epics.md")
	gittest.Write(t, epics, gittest.Read(t, epics)+"\n### Story 1.5: Wave\n\nAs a user,\nI want `bin/greet --wave` to wave,\nSo that I can wave.\n\n"+
		"**Acceptance Criteria:**\n\n**Given** `--wave`\n**When** I run `sh bin/greet --wave`\n**Then** it prints `o/`\n")
	status := filepath.Join(root, "_bmad-output", "implementation-artifacts", "sprint-status.yaml")
	text := gittest.Read(t, status)
	text = strings.Replace(text, "  epic-1-retrospective:", "  1-5-wave: backlog\n  epic-1-retrospective:", 1)
	gittest.Write(t, status, text)
	gittest.Git(t, root, "add", "-A")
	gittest.Git(t, root, "commit", "-q", "-m", "story 1.5")
}

// wait blocks until ch closes or ctx ends.
func wait(ctx context.Context, ch <-chan struct{}) {
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// Stories 1.2 and 1.4 edit one line; 1.4 lands first, so 1.2 conflicts.
// 1.5 depends on nothing and finishes only after the conflict: it still
// lands. 1.3 depends on 1.2: it never starts. After the user resolves the
// conflict, --resume lands 1.2, then runs 1.3.
func TestWorktreeRunConflictBlocksOnlyThatStoryAndItsDependents(t *testing.T) {
	t.Parallel()
	h, d := worktreeRun(t)
	addWave(t, h.Root())
	landed4, conflicted := make(chan struct{}), make(chan struct{})
	var once4, onceC sync.Once
	d.Report = reportFunc(func(ev orchestrator.Event) {
		switch {
		case ev.Kind == orchestrator.EventUnitDone && strings.HasPrefix(ev.Unit, "1.4"):
			once4.Do(func() { close(landed4) })
		case ev.Kind == orchestrator.EventEscalated:
			onceC.Do(func() { close(conflicted) })
		}
	})
	var mu sync.Mutex
	var started []string
	h.SetScript(func(ctx context.Context, req orchestrator.StepRequest) orchestrator.StepResult {
		mu.Lock()
		started = append(started, req.Story+" "+req.Step)
		mu.Unlock()
		if req.Step != orchestrator.StepDev {
			return orchestrator.StepResult{FinalState: orchestrator.FinalCompleted}
		}
		switch {
		case strings.HasPrefix(req.Story, "1-2"):
			wait(ctx, landed4)
			editLine(t, req, 5, "story 1-2")
		case strings.HasPrefix(req.Story, "1-4"):
			editLine(t, req, 5, "story 1-4")
		case strings.HasPrefix(req.Story, "1-5"):
			wait(ctx, conflicted)
			editLine(t, req, 9, "story 1-5")
		}
		if ctx.Err() != nil {
			return orchestrator.StepResult{FinalState: orchestrator.FinalInterrupted}
		}
		return orchestrator.StepResult{FinalState: orchestrator.FinalCompleted}
	})
	base := strings.TrimSpace(gittest.Git(t, h.Root(), "rev-parse", "HEAD"))
	o := worktreeOptions(h)
	o.Stories = "2,3,4,5"
	res, err := orchestrator.Run(context.Background(), o, d)
	if orchestrator.Code(err) != "run_escalated" {
		t.Fatalf("err = %v, want the run escalated", err)
	}
	st := h.Saved(res)
	if st.Escalation == nil || st.Escalation.Code != orchestrator.CodeMergeConflict || !strings.HasPrefix(st.Escalation.Unit, "1.2") {
		t.Fatalf("escalation %+v, want 1.2's merge_conflict", st.Escalation)
	}
	status := map[string]string{}
	for _, u := range st.Units {
		status[u.Key[:3]] = u.Status
	}
	if status["1-2"] != orchestrator.StatusEscalated || status["1-3"] != orchestrator.StatusPending || status["1-4"] != orchestrator.StatusDone || status["1-5"] != orchestrator.StatusDone {
		t.Fatalf("unit statuses %v: want 1.2 escalated, 1.3 pending, 1.4 and 1.5 done", status)
	}
	for _, s := range started {
		if strings.HasPrefix(s, "1-3") {
			t.Fatalf("1.3, which depends on the conflicted 1.2, started: %v", started)
		}
	}
	if !strings.Contains(strings.Join(logLines(st), "\n"), "waits on 1.2") {
		t.Fatalf("the log does not say 1.3 waits on 1.2:\n%s", strings.Join(logLines(st), "\n"))
	}
	if got := gittest.Read(t, filepath.Join(h.Root(), "shared.txt")); !strings.Contains(got, "story 1-5") || !strings.Contains(got, "story 1-4") {
		t.Fatalf("shared.txt lacks 1.4 or 1.5:\n%s", got)
	}
	if n := strings.TrimSpace(gittest.Git(t, h.Root(), "rev-list", "--count", base+"..HEAD")); n != "2" {
		t.Fatalf("%s commits on the user's branch, want 1.4's and 1.5's", n)
	}
	m, err := h.Store().Read()
	if err != nil || m.Status != "paused" || m.StoriesRemaining != 2 {
		t.Fatalf("marker %+v (%v), want paused with 2 stories remaining", m, err)
	}
	// The user resolves the conflict in 1.2's kept worktree.
	wt := st.Unit(unitKey(st, "1-2")).Worktree
	gittest.Git(t, wt, "reset", "-q", "--hard", strings.TrimSpace(gittest.Git(t, h.Root(), "rev-parse", "HEAD")))
	gittest.Write(t, filepath.Join(wt, "shared.txt"), strings.Replace(gittest.Read(t, filepath.Join(h.Root(), "shared.txt")), "story 1-4", "story 1-4 and 1-2", 1))
	h.SetScript(nil)
	o = h.Options()
	o.Resume, o.Stories = true, ""
	res, err = orchestrator.Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range h.Saved(res).Units {
		if u.Kind == orchestrator.KindStory && u.Status != orchestrator.StatusDone {
			t.Fatalf("%s is %s after the resume", u.Key, u.Status)
		}
	}
	// One commit a story (and the epic's retrospective, now that all are done).
	if log := gittest.Git(t, h.Root(), "log", "--format=%s", base+"..HEAD"); strings.Count(log, "story 1.") != 4 || strings.Count(log, "\n") != 5 {
		t.Fatalf("commits on the user's branch:\n%s", log)
	}
	if got := gittest.Read(t, filepath.Join(h.Root(), "shared.txt")); !strings.Contains(got, "story 1-4 and 1-2") {
		t.Fatalf("shared.txt lacks the resolution:\n%s", got)
	}
	if list := gittest.Git(t, h.Root(), "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
	if br := gittest.Git(t, h.Root(), "branch", "--list", "story-automator/*"); br != "" {
		t.Fatalf("branches left: %s", br)
	}
}

func unitKey(st *orchestrator.State, prefix string) string {
	for _, u := range st.Units {
		if strings.HasPrefix(u.Key, prefix) {
			return u.Key
		}
	}
	return prefix
}

func logLines(st *orchestrator.State) []string {
	var out []string
	for _, l := range st.Log {
		out = append(out, l.Unit+" "+l.Message)
	}
	return out
}

func TestARefusedRunLeavesNothingGitShows(t *testing.T) {
	t.Parallel()
	h := orchestrator.NewHarness(t, "1-1")
	gittest.Git(t, h.Root(), "init", "-q")
	gittest.Write(t, filepath.Join(h.Root(), "README.md"), "hi\n")
	gittest.Git(t, h.Root(), "add", "README.md")
	gittest.Git(t, h.Root(), "commit", "-q", "-m", "init")
	gittest.Write(t, filepath.Join(h.Root(), "README.md"), "edited by the user\n")
	d := h.Deps()
	d.Repo = &gitvcs.Git{Root: h.Root(), StatePaths: []string{orchestrator.StateDirName + "/runs/", orchestrator.StateDirName + "/run.lock"}}
	_, err := orchestrator.Run(context.Background(), h.Options(), d)
	if !errors.Is(err, orchestrator.ErrDirtyWorktree) {
		t.Fatalf("run: %v", err)
	}
	if s := gittest.Status(t, h.Root()); s != "M README.md" {
		t.Fatalf("git status after a refused run:\n%s", s)
	}
}

// Under --on-escalation park a conflicting story parks: its worktree and
// branch kept, its ref at the branch's tip, the other story landed, the
// run done_with_parked.
func TestWorktreeRunConflictParksTheStory(t *testing.T) {
	t.Parallel()
	h, d := worktreeRun(t)
	h.SetScript(func(_ context.Context, req orchestrator.StepRequest) orchestrator.StepResult {
		if req.Step == orchestrator.StepDev {
			editLine(t, req, 5, "story "+req.Story[:3])
		}
		return orchestrator.StepResult{FinalState: orchestrator.FinalCompleted}
	})
	o := worktreeOptions(h)
	o.OnEscalation = orchestrator.OnEscalationPark
	res, err := orchestrator.Run(context.Background(), o, d)
	if orchestrator.Code(err) != "done_with_parked" || res.Outcome != orchestrator.OutcomeDoneWithParked {
		t.Fatalf("err = %v, want done_with_parked", err)
	}
	st := h.Saved(res)
	var parked, landed *orchestrator.Unit
	for _, u := range st.Units {
		switch u.Status {
		case orchestrator.StatusParked:
			parked = u
		case orchestrator.StatusDone:
			landed = u
		}
	}
	if parked == nil || landed == nil || st.Escalation != nil {
		t.Fatalf("units %+v, escalation %+v: want one parked, one landed", st.Units, st.Escalation)
	}
	p := parked.Parked
	if p.Code != orchestrator.CodeMergeConflict || p.Ref != orchestrator.ParkRef(st.RunID, parked.Key) || parked.Worktree == "" {
		t.Fatalf("parked %+v in %q", p, parked.Worktree)
	}
	tip := strings.TrimSpace(gittest.Git(t, parked.Worktree, "rev-parse", "HEAD"))
	if ref := strings.TrimSpace(gittest.Git(t, h.Root(), "rev-parse", p.Ref)); ref != tip || p.Commit != tip {
		t.Fatalf("%s is %s, the worktree's tip %s", p.Ref, ref, tip)
	}
	if got := gittest.Git(t, h.Root(), "show", p.Ref+":shared.txt"); !strings.Contains(got, "story "+parked.Key[:3]) {
		t.Fatalf("the ref lacks the parked story's line:\n%s", got)
	}
}
