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

// reportFunc is a Reporter that calls a function.
type reportFunc func(Event)

func (f reportFunc) Report(ev Event) { f(ev) }

// addWave adds story 1.5, which depends on nothing, to the sample of
// worktreeRun and commits it.
func addWave(t *testing.T, root string) {
	t.Helper()
	epics := filepath.Join(root, "_bmad-output", "planning-artifacts", "epics.md")
	write(t, epics, readTestFile(t, epics)+"\n### Story 1.5: Wave\n\nAs a user,\nI want `bin/greet --wave` to wave,\nSo that I can wave.\n\n"+
		"**Acceptance Criteria:**\n\n**Given** `--wave`\n**When** I run `sh bin/greet --wave`\n**Then** it prints `o/`\n")
	status := filepath.Join(root, "_bmad-output", "implementation-artifacts", "sprint-status.yaml")
	text := readTestFile(t, status)
	text = strings.Replace(text, "  epic-1-retrospective:", "  1-5-wave: backlog\n  epic-1-retrospective:", 1)
	write(t, status, text)
	mustGit(t, root, "add", "-A")
	mustGit(t, root, "commit", "-q", "-m", "story 1.5")
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
	h, d := worktreeRun(t)
	addWave(t, h.root)
	landed4, conflicted := make(chan struct{}), make(chan struct{})
	var once4, onceC sync.Once
	d.Report = reportFunc(func(ev Event) {
		switch {
		case ev.Kind == EventUnitDone && strings.HasPrefix(ev.Unit, "1.4"):
			once4.Do(func() { close(landed4) })
		case ev.Kind == EventEscalated:
			onceC.Do(func() { close(conflicted) })
		}
	})
	var mu sync.Mutex
	var started []string
	h.steps.script = func(ctx context.Context, req StepRequest) StepResult {
		mu.Lock()
		started = append(started, req.Story+" "+req.Step)
		mu.Unlock()
		if req.Step != StepDev {
			return StepResult{FinalState: FinalCompleted}
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
			return StepResult{FinalState: FinalInterrupted}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	base := strings.TrimSpace(mustGit(t, h.root, "rev-parse", "HEAD"))
	o := worktreeOptions(h)
	o.Stories = "2,3,4,5"
	res, err := Run(context.Background(), o, d)
	if Code(err) != "run_escalated" {
		t.Fatalf("err = %v, want the run escalated", err)
	}
	st := h.saved(res)
	if st.Escalation == nil || st.Escalation.Code != CodeMergeConflict || !strings.HasPrefix(st.Escalation.Unit, "1.2") {
		t.Fatalf("escalation %+v, want 1.2's merge_conflict", st.Escalation)
	}
	status := map[string]string{}
	for _, u := range st.Units {
		status[u.Key[:3]] = u.Status
	}
	if status["1-2"] != StatusEscalated || status["1-3"] != StatusPending || status["1-4"] != StatusDone || status["1-5"] != StatusDone {
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
	if got := readTestFile(t, filepath.Join(h.root, "shared.txt")); !strings.Contains(got, "story 1-5") || !strings.Contains(got, "story 1-4") {
		t.Fatalf("shared.txt lacks 1.4 or 1.5:\n%s", got)
	}
	if n := strings.TrimSpace(mustGit(t, h.root, "rev-list", "--count", base+"..HEAD")); n != "2" {
		t.Fatalf("%s commits on the user's branch, want 1.4's and 1.5's", n)
	}
	m, err := h.store().Read()
	if err != nil || m.Status != "paused" || m.StoriesRemaining != 2 {
		t.Fatalf("marker %+v (%v), want paused with 2 stories remaining", m, err)
	}
	// The user resolves the conflict in 1.2's kept worktree.
	wt := st.Unit(unitKey(st, "1-2")).Worktree
	mustGit(t, wt, "reset", "-q", "--hard", strings.TrimSpace(mustGit(t, h.root, "rev-parse", "HEAD")))
	write(t, filepath.Join(wt, "shared.txt"), strings.Replace(readTestFile(t, filepath.Join(h.root, "shared.txt")), "story 1-4", "story 1-4 and 1-2", 1))
	h.steps.script = nil
	o = h.options()
	o.Resume, o.Stories = true, ""
	res, err = Run(context.Background(), o, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range h.saved(res).Units {
		if u.Kind == KindStory && u.Status != StatusDone {
			t.Fatalf("%s is %s after the resume", u.Key, u.Status)
		}
	}
	// One commit a story (and the epic's retrospective, now that all are done).
	if log := mustGit(t, h.root, "log", "--format=%s", base+"..HEAD"); strings.Count(log, "story 1.") != 4 || strings.Count(log, "\n") != 5 {
		t.Fatalf("commits on the user's branch:\n%s", log)
	}
	if got := readTestFile(t, filepath.Join(h.root, "shared.txt")); !strings.Contains(got, "story 1-4 and 1-2") {
		t.Fatalf("shared.txt lacks the resolution:\n%s", got)
	}
	if list := mustGit(t, h.root, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Fatalf("worktrees left:\n%s", list)
	}
	if br := mustGit(t, h.root, "branch", "--list", "story-automator/*"); br != "" {
		t.Fatalf("branches left: %s", br)
	}
}

func unitKey(st *State, prefix string) string {
	for _, u := range st.Units {
		if strings.HasPrefix(u.Key, prefix) {
			return u.Key
		}
	}
	return prefix
}

func logLines(st *State) []string {
	var out []string
	for _, l := range st.Log {
		out = append(out, l.Unit+" "+l.Message)
	}
	return out
}
