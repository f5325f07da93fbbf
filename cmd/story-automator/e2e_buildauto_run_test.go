package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/internal/testing/realbmad"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// The board BMAD's sprint_plan.py keyed for newBMAD612Project's epics.
var buildAutoKeys = map[string]string{"1-1": "1-1-sign-up", "1-2": "1-2-account-settings", "2-1": "2-1-invoices"}

// buildAutoProject is a real 6.12 project with a board from BMAD's own
// sprint planning, the retrospective switched off (another unit's work),
// and extra step policy lines.
func buildAutoProject(t *testing.T, steps string) (*runProject, realbmad.Installed) {
	t.Helper()
	p, in := newBMAD612Project(t)
	return p, withBuildAutoPolicy(t, p, in, steps)
}

// withBuildAutoPolicy writes and commits buildAutoProject's policy.
func withBuildAutoPolicy(t *testing.T, p *runProject, in realbmad.Installed, steps string) realbmad.Installed {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(p.root, ".story-automator"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "steps:\n  retro:\n    enabled: false\n" + steps
	if err := os.WriteFile(filepath.Join(p.root, ".story-automator", "workflow.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "policy")
	return in
}

func (p *runProject) board() string {
	return readFile(p.t.(*testing.T), filepath.Join(p.root, "_bmad-output", "implementation-artifacts", "sprint-status.yaml"))
}

// boardStatus is an entry's status on the board.
func boardStatus(board, key string) string {
	for _, l := range strings.Split(board, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// validateBoard runs BMAD's own sprint_plan.py validate on the board.
func (p *runProject) validateBoard(in realbmad.Installed) string {
	p.t.Helper()
	return in.RunScript(p.t, p.root, ".claude/skills/bmad-sprint-planning/scripts/sprint_plan.py", "validate",
		"--status-file", "_bmad-output/implementation-artifacts/sprint-status.yaml")
}

// checkLanded checks one commit per story, its subject led by the board's
// key, the worker's own message kept in its body, the board all done and
// accepted by BMAD's validate, the tree clean.
func (p *runProject) checkLanded(in realbmad.Installed, keys ...string) {
	p.t.Helper()
	commits := p.storyCommits()
	board := p.board()
	for _, k := range keys {
		full := buildAutoKeys[k]
		if commits[k] != 1 {
			p.t.Errorf("story %s has %d commits: %v", k, commits[k], commits)
		}
		sha := strings.TrimSpace(p.git("log", "--format=%H", "--grep=Story-Automator-Story: "+k, "-1"))
		msg := p.git("log", "-1", "--format=%B", sha)
		if !strings.HasPrefix(msg, full+":") || !strings.Contains(msg, full+": done by the simulated "+workflows.BuildAutoSkill) {
			p.t.Errorf("story %s's commit message:\n%s", k, msg)
		}
		files := p.git("show", "--name-only", "--format=", sha)
		if !strings.Contains(files, agentsim.SimWorkDir+"/"+full+".txt") || !strings.Contains(files, "spec-"+full+".md") {
			p.t.Errorf("story %s's commit holds:\n%s", k, files)
		}
		if s := boardStatus(board, full); s != "done" {
			p.t.Errorf("board: %s is %q:\n%s", full, s, board)
		}
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		p.t.Errorf("the run left the tree dirty:\n%s", dirty)
	}
	out := p.validateBoard(in)
	p.t.Logf("sprint_plan.py validate: %s", strings.TrimSpace(out))
}

// A run on the build-auto pipeline with the sim agent takes a real 6.12
// project's board, from BMAD's own sprint planning, to done: the worker
// dispatched in its skill form, story by story, each landed as one commit
// with the worker's commits squashed, the board moved by the run alone
// (epics done after their last story) and accepted by BMAD's validate.
func TestE2EBuildAutoRunTakesTheBoardToDone(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	res, code := p.run([]string{withUV(in)}, "run", "--agent", "sim", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run: exit %d %v\n%s", code, res, p.stateLog())
	}
	p.checkLanded(in, "1-1", "1-2", "2-1")
	board := p.board()
	for _, epic := range []string{"epic-1", "epic-2"} {
		if s := boardStatus(board, epic); s != "done" {
			t.Errorf("%s is %q", epic, s)
		}
	}
	st := p.state()
	for _, u := range st.Units {
		if want := "_bmad-output/implementation-artifacts/spec-" + buildAutoKeys[u.Key] + ".md"; u.Spec != want {
			t.Errorf("unit %s records the spec %q, want %q", u.Key, u.Spec, want)
		}
		if r := u.Step(orchestrator.StepReview); r == nil || r.Status != orchestrator.StatusSkipped {
			t.Errorf("unit %s's review: %+v", u.Key, r)
		}
	}
	logDoneToDispatch(t, st)
}

// logDoneToDispatch logs (does not assert) the time from each story's
// worker ending done to the next story's dispatch.
func logDoneToDispatch(t *testing.T, st *orchestrator.State) {
	for i := 0; i+1 < len(st.Units); i++ {
		dev, next := st.Units[i].Step(orchestrator.StepDev), st.Units[i+1].Step(orchestrator.StepDev)
		if dev == nil || next == nil || len(dev.Attempts) == 0 || len(next.Attempts) == 0 {
			continue
		}
		end, ok1 := marker.ParseTime(dev.Attempts[len(dev.Attempts)-1].EndedAt)
		start, ok2 := marker.ParseTime(next.Attempts[0].StartedAt)
		if ok1 && ok2 {
			t.Logf("measured: story %s's worker seen done at %s, story %s dispatched %s later (land, board, bookkeeping commit)",
				st.Units[i].Dotted, end.Format("15:04:05.000"), st.Units[i+1].Dotted, start.Sub(end).Round(time.Millisecond))
		}
	}
}

// stateLog is the newest state document's action log, for failures.
func (p *runProject) stateLog() string {
	path := orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root)
	if path == "" {
		return "(no state document)"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// specsOf lists a story's specs in the project's implementation artifacts.
func (p *runProject) specsOf(key string) []string {
	found, _ := filepath.Glob(filepath.Join(p.root, "_bmad-output", "implementation-artifacts", "spec-"+buildAutoKeys[key]+"*.md"))
	return found
}

// fastRetries makes the worker's step retry once, soon.
const fastRetries = "  dev:\n    retries: 1\n    backoff: 1s\n"

// A blocked worker escalates the story at once, quoting its blocking
// condition and saying what to do; the board keeps the story in progress.
func TestE2EBuildAutoBlockedEscalatesWithTheCondition(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	res, code := p.run([]string{withUV(in), agentsim.EnvBuildAuto + "=blocked=no subagents"}, "run", "--agent", "sim", "--stories", "1.1", "--json")
	st := p.state()
	esc := st.Escalation
	if code == 0 || esc == nil || esc.Code != "build_auto_blocked" || !strings.Contains(esc.Reason, `"no subagents"`) ||
		!strings.Contains(esc.Action, "blocking subagents") || !strings.Contains(esc.Action, "spec-1-1-sign-up.md") {
		t.Fatalf("exit %d %v, escalation %+v", code, res, esc)
	}
	if dev := st.Unit("1-1").Step(orchestrator.StepDev); len(dev.Attempts) != 1 {
		t.Fatalf("a blocked story was dispatched %d times", len(dev.Attempts))
	}
	board := p.board()
	if boardStatus(board, "1-1-sign-up") != "in-progress" || boardStatus(board, "epic-1") != "in-progress" || len(p.storyCommits()) != 0 {
		t.Fatalf("board:\n%s\ncommits %v", board, p.storyCommits())
	}
	p.validateBoard(in)
}

// A worker that died mid-flight is dispatched again by its spec's path
// (no second spec), and a resumed run finishes the same spec.
func TestE2EBuildAutoDiedMidFlightResumesBySpecPath(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, fastRetries)
	res, code := p.run([]string{withUV(in), agentsim.EnvBuildAuto + "=die=in-progress"}, "run", "--agent", "sim", "--stories", "1.1", "--on-escalation", "pause", "--json")
	st := p.state()
	dev := st.Unit("1-1").Step(orchestrator.StepDev)
	spec := "_bmad-output/implementation-artifacts/spec-1-1-sign-up.md"
	if code == 0 || st.Escalation == nil || len(dev.Attempts) != 2 || st.Unit("1-1").Spec != spec ||
		!strings.Contains(dev.Attempts[1].Reason, "mid-flight with the spec in-progress") || !strings.Contains(dev.Attempts[1].Reason, spec) {
		t.Fatalf("exit %d %v, attempts %+v, spec %q", code, res, dev.Attempts, st.Unit("1-1").Spec)
	}
	if specs := p.specsOf("1-1"); len(specs) != 1 {
		t.Fatalf("specs %v: the retry did not resume by path", specs)
	}
	res, code = p.run([]string{withUV(in)}, "run", "--resume", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume: exit %d %v\n%s", code, res, p.stateLog())
	}
	if specs := p.specsOf("1-1"); len(specs) != 1 {
		t.Fatalf("specs %v after the resume", specs)
	}
	p.checkLanded(in, "1-1")
}

// No spec and no result file: the launcher failed, and the escalation says
// how, from the session's text (here BMAD's renderer, which the skill's
// launcher runs under uv, is gone from the project).
func TestE2EBuildAutoLauncherFailureIsNamed(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	if err := os.Remove(filepath.Join(p.root, "_bmad", "scripts", "render_skill.py")); err != nil {
		t.Fatal(err)
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "no renderer")
	res, code := p.run([]string{withUV(in)}, "run", "--agent", "sim", "--stories", "1.1", "--json")
	st := p.state()
	esc := st.Escalation
	if code == 0 || esc == nil || esc.Code != "build_auto_launcher_failed" ||
		!strings.Contains(esc.Reason, "renderer (_bmad/scripts/render_skill.py) is missing") || !strings.Contains(esc.Action, "Reinstall BMAD") {
		t.Fatalf("exit %d %v, escalation %+v", code, res, esc)
	}
	if dev := st.Unit("1-1").Step(orchestrator.StepDev); len(dev.Attempts) != 1 {
		t.Fatalf("a failed launcher was dispatched %d times", len(dev.Attempts))
	}
}

// A worker that recommends a follow-up review gets one more unattended
// review, by the spec's path; the story still lands as one commit, with
// both of the worker's messages.
func TestE2EBuildAutoFollowupReviewRunsOnce(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	res, code := p.run([]string{withUV(in), agentsim.EnvBuildAuto + "=followup"}, "run", "--agent", "sim", "--stories", "1.1", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("exit %d %v\n%s", code, res, p.stateLog())
	}
	review := p.state().Unit("1-1").Step(orchestrator.StepReview)
	if review.Status != orchestrator.StatusVerified || len(review.Attempts) != 1 {
		t.Fatalf("review %+v", review)
	}
	p.checkLanded(in, "1-1")
	msg := p.git("log", "-1", "--format=%B", "--grep=Story-Automator-Story: 1-1")
	if n := strings.Count(msg, "done by the simulated "+workflows.BuildAutoSkill); n != 2 {
		t.Fatalf("the story's commit keeps %d worker messages:\n%s", n, msg)
	}
}

// --plan-checkpoint: the worker halts after planning, the run pauses
// naming the spec; run --resume implements that spec.
func TestE2EBuildAutoPlanCheckpointPausesThenResumes(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	res, code := p.run([]string{withUV(in)}, "run", "--agent", "sim", "--stories", "1.1", "--plan-checkpoint", "--json")
	st := p.state()
	spec := "_bmad-output/implementation-artifacts/spec-1-1-sign-up.md"
	if code == 0 || st.Escalation == nil || st.Escalation.Code != "plan_review" || !strings.Contains(st.Escalation.Action, spec) {
		t.Fatalf("exit %d %v, escalation %+v", code, res, st.Escalation)
	}
	if s, err := workflows.ReadSpec(filepath.Join(p.root, spec)); err != nil || s.Status != workflows.SpecReadyForDev {
		t.Fatalf("spec %+v (%v)", s, err)
	}
	res, code = p.run([]string{withUV(in)}, "run", "--resume", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume: exit %d %v\n%s", code, res, p.stateLog())
	}
	if specs := p.specsOf("1-1"); len(specs) != 1 {
		t.Fatalf("specs %v", specs)
	}
	p.checkLanded(in, "1-1")
}

// Stories side by side, each in its own worktree: each worker starts on
// a clean tree with the run's bookkeeping committed there, and each story
// lands on the user's branch as one commit, the board right.
func TestE2EBuildAutoParallelWorktrees(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	res, code := p.run([]string{withUV(in)}, "run", "--agent", "sim", "--isolate", "worktree", "--parallel", "2", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("exit %d %v\n%s", code, res, p.stateLog())
	}
	p.checkLanded(in, "1-1", "1-2", "2-1")
	board := p.board()
	for _, epic := range []string{"epic-1", "epic-2"} {
		if s := boardStatus(board, epic); s != "done" {
			t.Errorf("%s is %q:\n%s", epic, s, board)
		}
	}
}
