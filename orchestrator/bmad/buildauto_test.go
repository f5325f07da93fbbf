package bmad

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// fakeGit is a StoryGit whose answers the test sets and whose commits it records.
type fakeGit struct {
	head     string
	dirty    []string
	msgs     []string
	commits  []string
	squashed *orchestrator.CommitRequest
	paths    []string
	found    string
}

func (g *fakeGit) Head(context.Context) (string, error)    { return g.head, nil }
func (g *fakeGit) Dirty(context.Context) ([]string, error) { return g.dirty, nil }
func (g *fakeGit) CommitPaths(_ context.Context, msg string, paths []string) error {
	g.commits = append(g.commits, msg+" "+strings.Join(paths, ","))
	g.dirty = nil
	return nil
}
func (g *fakeGit) Messages(context.Context, string) ([]string, error) { return g.msgs, nil }
func (g *fakeGit) Find(context.Context, orchestrator.CommitRequest) (string, bool, error) {
	return g.found, g.found != "", nil
}
func (g *fakeGit) Squash(_ context.Context, base string, req orchestrator.CommitRequest, paths []string) (string, error) {
	g.squashed, g.paths = &req, paths
	return "sha", nil
}

const artifactsDir = "_bmad-output/implementation-artifacts"

// sprintProject is a folder with a board in the default artifacts folder.
func sprintProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, artifactsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	board := "generated: 11-28-2026 10:00\nlast_updated: 11-28-2026 10:00\nproject: demo\ndevelopment_status:\n  epic-1: backlog\n  1-1-sign-up: backlog\n  1-2-settings: backlog\n  epic-1-retrospective: optional\n"
	if err := os.WriteFile(filepath.Join(dir, "sprint-status.yaml"), []byte(board), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func writeSpec(t *testing.T, root, name, front, tail string) string {
	t.Helper()
	rel := artifactsDir + "/" + name
	if err := os.WriteFile(filepath.Join(root, rel), []byte("---\n"+front+"---\n\n# spec\n"+tail), 0o644); err != nil {
		t.Fatal(err)
	}
	return rel
}

func pipelineAt(root string, g *fakeGit) BuildAuto {
	return BuildAuto{Root: root, Git: func(string, string) StoryGit { return g }}
}

// The first dispatch moves story and epic to in-progress, commits the
// board, records the base and the story's specs there were (not every
// other story's: the state would grow with the backlog), and sends the
// board's key in the agent's skill form with the board line; a plan
// checkpoint adds the halt.
func TestBuildAutoDispatchKeepsTheBoardAndSendsTheKey(t *testing.T) {
	root := sprintProject(t)
	writeSpec(t, root, "spec-0-1-old.md", "status: done\n", "")
	old := writeSpec(t, root, "spec-1-1-old.md", "status: done\n", "")
	g := &fakeGit{head: "base1", dirty: []string{artifactsDir + "/sprint-status.yaml"}}
	p := pipelineAt(root, g)
	d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Step: orchestrator.StepDev,
		Agent: "sim", PlanCheckpoint: true}
	got, err := p.Dispatch(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if got.Prompt != "/bmad-build-auto 1-1-sign-up Halt after planning.\n"+BoardLine || !got.Halt || got.Base != "base1" ||
		len(got.Before) != 1 || got.Before[0] != old {
		t.Fatalf("dispatched %+v", got)
	}
	board, _ := os.ReadFile(filepath.Join(root, artifactsDir, "sprint-status.yaml"))
	if !strings.Contains(string(board), "1-1-sign-up: in-progress") || !strings.Contains(string(board), "epic-1: in-progress") ||
		len(g.commits) != 1 || !strings.Contains(g.commits[0], "story 1.1 in progress") {
		t.Fatalf("board:\n%s\ncommits %v", board, g.commits)
	}
	// By path once the spec is known, past planning: no halt.
	d.Spec, d.Base = writeSpec(t, root, "spec-1-1-sign-up.md", "status: ready-for-dev\n", ""), "base1"
	got, err = p.Dispatch(context.Background(), d)
	if err != nil || got.Prompt != "/bmad-build-auto "+d.Spec+"\n"+BoardLine || got.Halt || got.Base != "" {
		t.Fatalf("dispatched %+v (%v)", got, err)
	}
	// The review goes only on a recommendation.
	d.Step = orchestrator.StepReview
	if got, _ := p.Dispatch(context.Background(), d); got.Skip == "" {
		t.Fatalf("review without a recommendation: %+v", got)
	}
}

// Outcome reads the spec: each status, the conditions the run settles and
// those a person must, and a launcher that failed.
func TestBuildAutoOutcomeReadsTheSpec(t *testing.T) {
	ctx := context.Background()
	completed := orchestrator.StepResult{FinalState: orchestrator.FinalCompleted}
	d := orchestrator.StoryDispatch{Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Step: orchestrator.StepDev, Before: []string{}}

	root := sprintProject(t)
	g := &fakeGit{msgs: []string{"work"}}
	rel := writeSpec(t, root, "spec-1-1-sign-up.md", "status: done\nbaseline_revision: b0\n", "\n## Auto Run Result\n\nStatus: done\n")
	out := pipelineAt(root, g).Outcome(ctx, d, completed)
	if out.FinalState != orchestrator.FinalCompleted || out.Spec != rel {
		t.Fatalf("done: %+v", out)
	}
	g.dirty = []string{"x.go"}
	if out := pipelineAt(root, g).Outcome(ctx, d, completed); out.FinalState != orchestrator.FinalIncomplete || !strings.Contains(out.Reason, "dirty: x.go") {
		t.Fatalf("dirty: %+v", out)
	}
	g.dirty, g.msgs = nil, nil
	if out := pipelineAt(root, g).Outcome(ctx, d, completed); out.FinalState != orchestrator.FinalIncomplete || !strings.Contains(out.Reason, "nothing was committed") {
		t.Fatalf("no commit: %+v", out)
	}

	d.Spec = rel
	writeSpec(t, root, "spec-1-1-sign-up.md", "status: in-progress\nbaseline_revision: b0\n", "")
	if out := pipelineAt(root, g).Outcome(ctx, d, completed); out.FinalState != orchestrator.FinalIncomplete || !strings.Contains(out.Reason, "mid-flight") {
		t.Fatalf("died: %+v", out)
	}
	writeSpec(t, root, "spec-1-1-sign-up.md", "status: ready-for-dev\n", "")
	d.Halt = true
	if out := pipelineAt(root, g).Outcome(ctx, d, completed); out.Pause == nil || out.Pause.Code != CodePlanReview || !strings.Contains(out.Pause.Action, rel) {
		t.Fatalf("planned: %+v", out)
	}
	d.Halt = false

	writeSpec(t, root, "spec-1-1-sign-up.md", "status: blocked\n", "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: no subagents\n")
	out = pipelineAt(root, g).Outcome(ctx, d, completed)
	if out.Blocker == nil || out.Blocker.Code != CodeBuildAutoBlocked || !strings.Contains(out.Blocker.Error(), `"no subagents"`) ||
		!strings.Contains(out.Blocker.Action, "subagents") || !strings.Contains(out.Blocker.Action, "back to draft") || out.Blocker.Park ||
		!strings.Contains(out.Blocker.Action, "`story-automator resolve 1.1`") {
		t.Fatalf("blocked: %+v (a condition of the agent pauses the run, it parks no story)", out)
	}
	// A condition that needs a person for this story alone parks it.
	writeSpec(t, root, "spec-1-1-sign-up.md", "status: blocked\n", "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: intent gap\n")
	if out := pipelineAt(root, g).Outcome(ctx, d, completed); out.Blocker == nil || !out.Blocker.Park || !strings.Contains(out.Blocker.Action, "answer the questions") {
		t.Fatalf("intent gap: %+v, want a blocker that parks", out)
	}
	// A stale epic context: the run removes the cache and replans.
	cache := filepath.Join(root, artifactsDir, "epic-1-context.md")
	if err := os.WriteFile(cache, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSpec(t, root, "spec-1-1-sign-up.md", "status: blocked\n", "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: context compilation verification failed\n")
	out = pipelineAt(root, g).Outcome(ctx, d, completed)
	spec, _ := workflows.ReadSpec(filepath.Join(root, rel))
	if _, err := os.Stat(cache); !os.IsNotExist(err) || out.Blocker != nil || out.Retry == "" || spec.Status != workflows.SpecDraft {
		t.Fatalf("stale context: %+v, spec %s, cache %v", out, spec.Status, err)
	}
	// Dirt that is the run's own board: committed, the spec back to review.
	g.dirty = []string{artifactsDir + "/sprint-status.yaml"}
	writeSpec(t, root, "spec-1-1-sign-up.md", "status: blocked\nbaseline_revision: b0\n", "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: finalization left repository dirty\n")
	out = pipelineAt(root, g).Outcome(ctx, d, completed)
	spec, _ = workflows.ReadSpec(filepath.Join(root, rel))
	if out.Blocker != nil || out.Retry == "" || spec.Status != workflows.SpecInReview || len(g.commits) != 1 {
		t.Fatalf("own dirt: %+v, spec %s, commits %v", out, spec.Status, g.commits)
	}
	g.dirty = []string{"src/x.go"}
	writeSpec(t, root, "spec-1-1-sign-up.md", "status: blocked\nbaseline_revision: b0\n", "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: finalization left repository dirty\n")
	if out := pipelineAt(root, g).Outcome(ctx, d, completed); out.Blocker == nil || !out.Blocker.Park {
		t.Fatalf("someone else's dirt settled, or not parked: %+v", out)
	}
}

// No spec: a result file's condition, else the launcher's failure named
// from the session's text, else the monitor's verdict stands.
func TestBuildAutoOutcomeWithoutASpec(t *testing.T) {
	ctx := context.Background()
	root := sprintProject(t)
	d := orchestrator.StoryDispatch{Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Step: orchestrator.StepDev, Before: []string{}}
	log := filepath.Join(t.TempDir(), "out.log")
	if err := os.WriteFile(log, []byte("$ uv run --no-cache render_skill.py\nbash: line 1: uv: command not found\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := pipelineAt(root, &fakeGit{}).Outcome(ctx, d, orchestrator.StepResult{FinalState: orchestrator.FinalCompleted, OutputFile: log})
	if out.Blocker == nil || out.Blocker.Code != CodeLauncherFailed || !strings.Contains(out.Blocker.Error(), "uv is missing") ||
		!strings.Contains(out.Blocker.Error(), "uv: command not found") {
		t.Fatalf("uv missing: %+v", out)
	}
	crashed := orchestrator.StepResult{FinalState: orchestrator.FinalCrashed}
	if out := pipelineAt(root, &fakeGit{}).Outcome(ctx, d, crashed); out.FinalState != "" || out.Blocker != nil {
		t.Fatalf("a crash with nothing to read: %+v", out)
	}
	writeSpec(t, root, "bmad-build-auto-result-1.md", "status: blocked\n", "\nStatus: blocked\nBlocking condition: unclear intent\n")
	out = pipelineAt(root, &fakeGit{}).Outcome(ctx, d, crashed)
	if out.Blocker == nil || !strings.Contains(out.Blocker.Error(), `"unclear intent"`) || !strings.Contains(out.Blocker.Action, "bmad-build-auto-result-1.md") || !out.Blocker.Park {
		t.Fatalf("result file: %+v", out)
	}
}

// A result file there was at the story's first dispatch (another story's,
// an earlier run's) is not this story's: only one written since counts, a
// new file or the old name written over with something else.
func TestBuildAutoOutcomeCountsOnlyANewResultFile(t *testing.T) {
	ctx := context.Background()
	root := sprintProject(t)
	writeSpec(t, root, "bmad-build-auto-result-0-9-old.md", "status: blocked\n", "\nStatus: blocked\nBlocking condition: unclear intent\n")
	reused := writeSpec(t, root, "bmad-build-auto-result-1-1-sign-up.md", "status: blocked\n", "\nStatus: blocked\nBlocking condition: no epic spec found\n")
	g := &fakeGit{head: "base1", dirty: []string{artifactsDir + "/sprint-status.yaml"}}
	p := pipelineAt(root, g)
	d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Step: orchestrator.StepDev, Agent: "sim"}
	got, err := p.Dispatch(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	d.Base, d.Before = got.Base, got.Before
	completed := orchestrator.StepResult{FinalState: orchestrator.FinalCompleted}
	if out := p.Outcome(ctx, d, completed); out.Blocker != nil || out.FinalState != orchestrator.FinalIncomplete ||
		!strings.Contains(out.Reason, "without a spec or a result file") {
		t.Fatalf("the old result files were taken as this attempt's: %+v", out)
	}
	// The worker halts again under the old name, with its own condition.
	writeSpec(t, root, "bmad-build-auto-result-1-1-sign-up.md", "status: blocked\n", "\nStatus: blocked\nBlocking condition: no subagents\n")
	out := p.Outcome(ctx, d, completed)
	if out.Blocker == nil || !strings.Contains(out.Blocker.Error(), `"no subagents"`) || !strings.Contains(out.Blocker.Error(), reused) {
		t.Fatalf("the result written over the old name: %+v", out)
	}
	if err := os.Remove(filepath.Join(root, reused)); err != nil {
		t.Fatal(err)
	}
	fresh := writeSpec(t, root, "bmad-build-auto-result-20261128-1000.md", "status: blocked\n", "\nStatus: blocked\nBlocking condition: unclear intent\n")
	if out := p.Outcome(ctx, d, completed); out.Blocker == nil || !strings.Contains(out.Blocker.Error(), fresh) {
		t.Fatalf("a new result file: %+v", out)
	}
}

// Land sets the story done (the epic after its last story) and squashes
// with the board key in the subject and the worker's messages in the body.
func TestBuildAutoLandSquashesWithTheKey(t *testing.T) {
	root := sprintProject(t)
	g := &fakeGit{msgs: []string{"feat: sign up", "fix: review"}}
	rel := writeSpec(t, root, "spec-1-1-sign-up.md", "status: done\nbaseline_revision: b0\n", "")
	d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Spec: rel, Base: "base0"}
	req := &orchestrator.CommitRequest{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1", Title: "Sign up"}}
	if err := pipelineAt(root, g).Land(context.Background(), d, req); err != nil {
		t.Fatal(err)
	}
	board, _ := os.ReadFile(filepath.Join(root, artifactsDir, "sprint-status.yaml"))
	if g.squashed == nil || g.squashed.Subject != "1-1-sign-up: Sign up" || !strings.Contains(g.squashed.Body, "feat: sign up\n\nfix: review") ||
		!strings.Contains(string(board), "1-1-sign-up: done") || !strings.Contains(string(board), "epic-1: in-progress") {
		t.Fatalf("squashed %+v\nboard:\n%s", g.squashed, board)
	}
}

// Where this pipeline cannot run a story it refuses before anything is
// written: another machine, or stories side by side in one working tree.
func TestBuildAutoDispatchRefusesWhereItCannotRun(t *testing.T) {
	root := sprintProject(t)
	before, _ := os.ReadFile(filepath.Join(root, artifactsDir, "sprint-status.yaml"))
	g := &fakeGit{head: "base1"}
	for _, d := range []orchestrator.StoryDispatch{
		{Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Step: orchestrator.StepDev, Agent: "sim", Host: "builder"},
		{Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Step: orchestrator.StepDev, Agent: "sim", SharedTree: true},
	} {
		_, err := pipelineAt(root, g).Dispatch(context.Background(), d)
		if b, ok := orchestrator.AsBlocker(err); !ok || b.Code != CodeBuildAutoWhere {
			t.Fatalf("%+v: %v", d, err)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(root, artifactsDir, "sprint-status.yaml")); string(after) != string(before) || len(g.commits) != 0 {
		t.Fatalf("a refused dispatch wrote the board:\n%s", after)
	}
}

// A story landing in the project's own folder brings its spec's deferred
// findings into deferred-work.md and the ledger into its commit; in a
// worktree it leaves the ledger alone (parallel landings would conflict on
// it; `story-automator deferred` collects them).
func TestBuildAutoLandCollectsDeferredFindings(t *testing.T) {
	findings := "deferred:\n  - summary: Retry test is flaky\n    evidence: fails 1 in 50\n    location: retry_test.go:10\n    severity: low\n"
	for _, worktree := range []bool{false, true} {
		root := sprintProject(t)
		rel := writeSpec(t, root, "spec-1-1-sign-up.md", "status: done\nbaseline_revision: b0\n"+findings, "")
		d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: "1-1", Dotted: "1.1"}, Spec: rel, Base: "base0"}
		p := pipelineAt(root, &fakeGit{})
		if worktree {
			d.WorkDir, p.Root = root, t.TempDir()
		}
		g := &fakeGit{}
		p.Git = func(string, string) StoryGit { return g }
		if err := p.Land(context.Background(), d, &orchestrator.CommitRequest{RunID: "r", Story: d.Story}); err != nil {
			t.Fatal(err)
		}
		ledger := artifactsDir + "/" + workflows.DeferredWorkFile
		data, err := os.ReadFile(filepath.Join(root, ledger))
		switch {
		case worktree && (err == nil || slices.Contains(g.paths, ledger)):
			t.Fatalf("a worktree's landing wrote the ledger: paths %v", g.paths)
		case !worktree && (err != nil || !strings.Contains(string(data), "Retry test is flaky") || !slices.Contains(g.paths, ledger)):
			t.Fatalf("ledger %q (%v), squashed paths %v", data, err, g.paths)
		}
	}
}
