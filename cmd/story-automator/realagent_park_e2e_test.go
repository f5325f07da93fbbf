package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// realParkEpics are parkEpics with story 1.1's intent unclear in its
// title, so BMAD's sprint planning keys it 1-1-sign-up-intent-unclear and
// model-sim's build-auto script blocks it (an intent gap): 1.2 depends on
// it, epic 2's two stories on nothing.
var realParkEpics = strings.Replace(parkEpics, "### Story 1.1: Sign up\n", "### Story 1.1: Sign up (intent unclear)\n", 1)

// The real Claude Code runs the real bmad-build-auto skill against
// model-sim over a backlog where the worker blocks story 1.1 at planning
// with an intent gap: the run parks 1.1 (its blocked spec kept on its
// ref, out of the tree), lands the two stories of epic 2 that do not
// depend on it, leaves 1.2 (which does) pending, and ends
// done_with_parked (exit 10). `resolve 1.1 --no-interactive` brings the
// spec back and sets it to draft; `run --resume` dispatches it by its
// path, the worker resumes it to done, and 1.2 lands after it.
func TestRealClaudeRunParksABlockedStoryThenResolveAndResumeToDone(t *testing.T) {
	t.Parallel()
	cli := realagent.Require(t, "claude")
	p, in := newBMAD612ProjectWith(t, realParkEpics)
	in = withBuildAutoPolicy(t, p, in, "")
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	srv := startModelSim(t, modelsim.BuildAutoScript)
	oenv, err := offline.Claude(offline.Config{Home: realHome(t), BaseURL: srv.URL(), Trusted: []string{root, p.root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+filepath.Dir(in.UV)+":"+os.Getenv("PATH"))
	const blocked, spec = "1-1-sign-up-intent-unclear", "_bmad-output/implementation-artifacts/spec-1-1-sign-up-intent-unclear.md"

	start := time.Now()
	res, code := p.run(env, "run", "--agent", "claude", "--json", "--completion-rechecks", "1")
	t.Logf("measured: the night's run (4 stories, one parked) took %s wall", time.Since(start).Round(time.Millisecond))
	if code != 10 || res["outcome"] != string(orchestrator.OutcomeDoneWithParked) || res["error"] != "done_with_parked" {
		t.Fatalf("run: exit %d %v\n%s", code, res, p.stateLog())
	}
	st := p.state()
	for key, want := range map[string]string{"1-1": orchestrator.StatusParked, "1-2": orchestrator.StatusPending,
		"2-1": orchestrator.StatusDone, "2-2": orchestrator.StatusDone} {
		if got := st.Unit(key).Status; got != want {
			t.Fatalf("%s is %s, want %s\n%s", key, got, want, p.stateLog())
		}
	}
	parked := st.Unit("1-1").Parked
	ref := orchestrator.ParkRef(st.RunID, "1-1")
	if parked == nil || parked.Code != "build_auto_blocked" || parked.Ref != ref || !strings.Contains(parked.Reason, `"intent gap"`) ||
		!strings.Contains(parked.Action, "answer the questions in the spec") || st.Escalation != nil {
		t.Fatalf("parked %+v, escalation %+v", parked, st.Escalation)
	}
	if kept := p.git("show", ref+":"+spec); !strings.Contains(kept, "status: 'blocked'") || !strings.Contains(kept, "Blocking condition: intent gap") ||
		!strings.Contains(kept, "**Open question:**") {
		t.Fatalf("the ref keeps:\n%s", kept)
	}
	if dirty := p.git("status", "--porcelain", "--untracked-files=all"); strings.TrimSpace(dirty) != "" {
		t.Fatalf("the parked story's work is left in the tree:\n%s", dirty)
	}
	if commits := p.storyCommits(); commits["2-1"] != 1 || commits["2-2"] != 1 || commits["1-1"] != 0 || commits["1-2"] != 0 {
		t.Fatalf("commits %v", commits)
	}
	board := p.board()
	if boardStatus(board, blocked) != "in-progress" || boardStatus(board, "2-1-invoices") != "done" || boardStatus(board, "2-2-refunds") != "done" ||
		boardStatus(board, "1-2-account-settings") == "done" || boardStatus(board, "epic-2") != "done" {
		t.Fatalf("board:\n%s", board)
	}
	if out := p.validateBoard(in); !strings.Contains(out, `"valid": true`) {
		t.Errorf("BMAD's sprint_plan.py validate refused the board: %s", out)
	}

	start = time.Now()
	res, code = p.run(nil, "resolve", "1.1", "--no-interactive", "--message", "the greeting addresses the visitor by name")
	t.Logf("measured: resolve --no-interactive took %s wall", time.Since(start).Round(time.Millisecond))
	if code != 0 || res["specFrom"] != "blocked" || res["specTo"] != "draft" || res["spec"] != spec || res["next"] != orchestrator.ResumeCommand {
		t.Fatalf("resolve: exit %d %v\n%s", code, res, p.stateLog())
	}
	if u := p.state().Unit("1-1"); u.Status != orchestrator.StatusPending || u.Parked != nil {
		t.Fatalf("re-armed: %+v", u)
	}

	start = time.Now()
	res, code = p.run(env, "run", "--resume", "--json", "--completion-rechecks", "1")
	t.Logf("measured: run --resume (2 stories) took %s wall", time.Since(start).Round(time.Millisecond))
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume: exit %d %v\n%s", code, res, p.stateLog())
	}
	// The worker was sent the spec's path, and resumed that spec in place:
	// the question it asked is still in it, now done with the review's verdict.
	if !promptedWith(srv.Exchanges(), spec) {
		t.Errorf("no dispatch by the spec's path reached the model:\n%s", exchangeSummary(srv.Exchanges()))
	}
	checkReviewSubagent(t, "claude", srv.Exchanges(), filepath.Join(root, filepath.FromSlash(spec)))
	if s, err := workflows.ReadSpec(filepath.Join(p.root, filepath.FromSlash(spec))); err != nil || s.Status != workflows.SpecDone || s.BaselineRevision == "" {
		t.Fatalf("the resumed spec %+v (%v)", s, err)
	}
	if text := readFile(t, filepath.Join(p.root, filepath.FromSlash(spec))); !strings.Contains(text, "**Open question:**") || !strings.Contains(text, "resumed from draft") {
		t.Errorf("the spec was not resumed in place:\n%s", text)
	}
	commits := p.storyCommits()
	for _, k := range []string{"1-1", "1-2", "2-1", "2-2"} {
		if commits[k] != 1 {
			t.Errorf("story %s has %d commits: %v", k, commits[k], commits)
		}
	}
	// (src/greeting.py landed with epic 2 already: every story of the script writes the same.)
	sha := strings.TrimSpace(p.git("log", "--format=%H", "--grep=Story-Automator-Story: 1-1", "-1"))
	if files, msg := p.git("show", "--name-only", "--format=", sha), p.git("log", "-1", "--format=%B", sha); !strings.Contains(files, "spec-"+blocked+".md") ||
		!strings.HasPrefix(msg, blocked+":") || !strings.Contains(msg, blocked+": greet, by the model-sim worker, resumed from its spec") {
		t.Errorf("story 1.1's commit:\n%s\n%s", msg, files)
	}
	board = p.board()
	for _, k := range []string{blocked, "1-2-account-settings", "2-1-invoices", "2-2-refunds", "epic-1", "epic-2"} {
		if s := boardStatus(board, k); s != "done" {
			t.Errorf("board: %s is %q:\n%s", k, s, board)
		}
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Errorf("the tree is dirty:\n%s", dirty)
	}
	if out := p.validateBoard(in); !strings.Contains(out, `"valid": true`) {
		t.Errorf("BMAD's sprint_plan.py validate refused the board: %s", out)
	}
	for _, u := range p.state().Units {
		if dev := u.Step(orchestrator.StepDev); dev != nil {
			for i, a := range dev.Attempts {
				t.Logf("measured: story %s's worker, attempt %d: %dms wall, %dms in the agent", u.Dotted, i+1, a.WallMs, a.AgentMs)
			}
		}
	}
}

// promptedWith reports whether a conversation's first user turn (the
// prompt the run sent) carried text.
func promptedWith(ex []modelsim.Exchange, text string) bool {
	for _, e := range ex {
		if c := e.Conversation(); c != nil && !e.Side && len(c.Messages) > 0 && strings.Contains(c.Messages[0].Text, text) {
			return true
		}
	}
	return false
}

// realSweepEpics are two stories whose titles say their reviews defer a
// finding: model-sim's build-auto script lists one under each done spec's
// `deferred:`.
const realSweepEpics = "# Epics\n\n## Epic 1: Accounts\n\n### Story 1.1: Sign up (defers a finding)\n\nAs a visitor I can sign up.\n\n" +
	"### Story 1.2: Account settings (defers a finding)\n\nAs a user I can change my settings.\n"

// The real Claude Code runs the real bmad-build-auto skill against
// model-sim over two stories whose reviews each defer a finding: the run
// lands both and collects each finding once into BMAD's deferred-work.md
// (in the story's commit); `story-automator deferred` lists the two open
// items and collects nothing more; `run --sweep` dispatches one free-text
// unit per source spec ("Fix deferred review findings …"), the worker
// writes a fresh spec and the fix through the skill, each unit lands as
// one commit and its item is marked done with that commit's id; the board
// is the sweep's to leave alone.
func TestRealClaudeSweepTakesDeferredFindingsOfTwoSpecsToDone(t *testing.T) {
	t.Parallel()
	cli := realagent.Require(t, "claude")
	p, in := newBMAD612ProjectWith(t, realSweepEpics)
	in = withBuildAutoPolicy(t, p, in, "")
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	srv := startModelSim(t, modelsim.BuildAutoScript)
	oenv, err := offline.Claude(offline.Config{Home: realHome(t), BaseURL: srv.URL(), Trusted: []string{root, p.root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+filepath.Dir(in.UV)+":"+os.Getenv("PATH"))
	specs := []string{"_bmad-output/implementation-artifacts/spec-1-1-sign-up-defers-a-finding.md",
		"_bmad-output/implementation-artifacts/spec-1-2-account-settings-defers-a-finding.md"}

	start := time.Now()
	res, code := p.run(env, "run", "--agent", "claude", "--json", "--completion-rechecks", "1")
	t.Logf("measured: the run of 2 stories took %s wall", time.Since(start).Round(time.Millisecond))
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run: exit %d %v\n%s", code, res, p.stateLog())
	}
	w := p.ledger()
	if len(w.Items) != 2 || len(w.Open(0)) != 2 {
		t.Fatalf("ledger after the run: %+v", w.Items)
	}
	for i, e := range w.Items {
		if e.SourceSpec != specs[i] || e.Severity != "medium" || e.Location != "src/greeting.py:2" ||
			!strings.HasPrefix(e.Summary, "greet keeps the spaces around a name") {
			t.Errorf("item %d: %+v", i, e)
		}
	}
	for _, k := range []string{"1-1", "1-2"} {
		sha := strings.TrimSpace(p.git("log", "--format=%H", "--grep=Story-Automator-Story: "+k, "-1"))
		if files := p.git("show", "--name-only", "--format=", sha); !strings.Contains(files, workflows.DeferredWorkFile) {
			t.Errorf("story %s's commit does not carry the ledger:\n%s", k, files)
		}
	}
	for i := 0; i < 2; i++ {
		res, code = p.run(nil, "deferred", "--json")
		collected, _ := res["collected"].(map[string]any)
		if added, _ := collected["added"].([]any); code != 0 || len(added) != 0 || len(openSummaries(t, res)) != 2 {
			t.Fatalf("deferred, call %d: exit %d %v", i+1, code, res)
		}
	}
	boardBefore := p.board()

	start = time.Now()
	res, code = p.run(env, "run", "--sweep", "--agent", "claude", "--json", "--completion-rechecks", "1")
	t.Logf("measured: run --sweep (2 units) took %s wall", time.Since(start).Round(time.Millisecond))
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run --sweep: exit %d %v\n%s", code, res, p.stateLog())
	}
	if !promptedWith(srv.Exchanges(), "Fix deferred review findings "+w.Items[0].ID) || !promptedWith(srv.Exchanges(), "Fix deferred review findings "+w.Items[1].ID) {
		t.Errorf("no free-text dispatch of each item reached the model:\n%s", exchangeSummary(srv.Exchanges()))
	}
	st := p.state()
	commits := p.storyCommits()
	marks := map[string]string{}
	if len(st.Units) != 2 {
		t.Fatalf("units %+v", st.Units)
	}
	for i, u := range st.Units {
		if u.Kind != orchestrator.KindSweep || u.Status != orchestrator.StatusDone || u.Commit == "" || commits[u.Key] != 1 ||
			u.Work.Source != specs[i] || len(u.Work.Items) != 1 {
			t.Fatalf("unit %s: %+v (commits %v)", u.Key, u, commits)
		}
		marks[u.Work.Items[0].ID] = u.Commit
		subject := strings.TrimSpace(p.git("log", "-1", "--format=%s", u.Commit))
		files := p.git("show", "--name-only", "--format=", u.Commit)
		if subject != "sweep: deferred findings of "+filepath.Base(specs[i]) || !strings.Contains(files, "spec-fix-"+u.Work.Items[0].ID+".md") ||
			strings.Contains(files, "sprint-status.yaml") {
			t.Errorf("unit %s's commit %q holds:\n%s", u.Key, subject, files)
		}
		if u.Spec != "_bmad-output/implementation-artifacts/spec-fix-"+u.Work.Items[0].ID+".md" {
			t.Errorf("unit %s's spec %q", u.Key, u.Spec)
		}
	}
	for _, e := range p.ledger().Items {
		if e.Done != marks[e.ID] {
			t.Errorf("item %s is marked %q, want %q", e.ID, e.Done, marks[e.ID])
		}
	}
	if code := p.git("show", "HEAD:src/greeting.py"); !strings.Contains(code, "name.strip()") {
		t.Errorf("the fix did not land:\n%s", code)
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Errorf("the sweep left the tree dirty:\n%s", dirty)
	}
	if p.board() != boardBefore {
		t.Errorf("the sweep changed the board:\n%s", p.board())
	}
	if out := p.validateBoard(in); !strings.Contains(out, `"valid": true`) {
		t.Errorf("BMAD's sprint_plan.py validate refused the board: %s", out)
	}
	res, code = p.run(nil, "deferred", "--json")
	if code != 0 || len(openSummaries(t, res)) != 0 {
		t.Errorf("deferred after the sweep: exit %d %v", code, res)
	}
	for _, u := range st.Units {
		if dev := u.Step(orchestrator.StepDev); dev != nil && len(dev.Attempts) > 0 {
			t.Logf("measured: %s's worker: %dms wall, %dms in the agent", u.Dotted, dev.Attempts[0].WallMs, dev.Attempts[0].AgentMs)
		}
	}
}
