package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows/sample"
)

// fast keeps failed verifications and retries short.
var fast = []string{"--completion-rechecks", "1", "--backoff", "10ms"}

func TestE2ERunTakesEveryStoryToDoneWithOneCommitEachAndKeepsSprintStatusFormatting(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	res, code := p.run(nil, append([]string{"run", "--agent", "sim", "--json"}, fast...)...)
	if code != 0 || res["ok"] != true || res["outcome"] != "done" {
		t.Fatalf("run exited %d: %v", code, res)
	}
	commits := p.storyCommits()
	for _, k := range sample.Stories {
		if commits[k] != 1 {
			t.Fatalf("story %s has %d commits (all: %v)", k, commits[k], commits)
		}
	}
	want := p.sprintWithStatuses(map[string]string{"1-1-greet-the-world": "done", "1-2-greet-by-name": "done",
		"1-3-shout-mode": "done", "1-4-farewell": "done", "epic-1": "done", "epic-1-retrospective": "done"})
	if got := readFile(t, p.sprintPath()); got != want {
		t.Fatalf("sprint-status.yaml lost formatting:\n--- got\n%s\n--- want\n%s", got, want)
	}
	if dirty := p.git("status", "--porcelain"); dirty != "" {
		t.Fatalf("the run left uncommitted changes:\n%s", dirty)
	}
	if files := p.git("log", "--grep=Story-Automator-Run:", "--name-only", "--format="); strings.Contains(files, ".story-automator/") || strings.Contains(files, ".claude/") {
		t.Fatalf("state was committed:\n%s", files)
	}
	// A prompt override the user adds later is theirs to commit: git sees it.
	if err := os.MkdirAll(p.root+"/.story-automator/prompts", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.root+"/.story-automator/prompts/dev.md", []byte("Implement {{.Story}}.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := p.git("status", "--porcelain"); got != "?? .story-automator/prompts/\n" {
		t.Fatalf("git status after adding a prompt override: %q", got)
	}
	if p.marker() != nil {
		t.Fatal("the marker outlived a finished run")
	}
	st := p.state()
	if st.Status != orchestrator.RunDone || st.StoriesRemaining() != 0 {
		t.Fatalf("state %s, %d remaining", st.Status, st.StoriesRemaining())
	}
	if st.Config.TmuxSocket != p.socket {
		t.Fatalf("the run recorded tmux socket %q, want %q", st.Config.TmuxSocket, p.socket)
	}
	p.checkCommitContents(st)
}

func TestE2ECrashOnDevAttemptOneIsRetriedWithTheFallbackAgent(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	faults := []string{"STORY_AUTOMATOR_SIM_FAULTS=crash:dev:1@1-1"}
	res, code := p.run(faults, append([]string{"run", "--agent", "sim", "--fallback-agent", "sim", "--stories", "1", "--json"}, fast...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %v", code, res)
	}
	dev := p.state().Unit("1-1").Step(orchestrator.StepDev)
	if len(dev.Attempts) != 2 || dev.Attempts[0].FinalState != "crashed" || dev.Attempts[1].Role != orchestrator.RoleFallback ||
		dev.Attempts[1].FinalState != "completed" {
		t.Fatalf("dev attempts %+v", dev.Attempts)
	}
	var devRuns []string
	for _, l := range p.simRuns() {
		if l.Step == "dev" {
			devRuns = append(devRuns, l.Role+":"+l.Outcome)
		}
	}
	if len(devRuns) != 2 || devRuns[0] != "primary:fault-crash" || !strings.HasPrefix(devRuns[1], "fallback:implemented") {
		t.Fatalf("dev as the agent saw it: %v", devRuns)
	}
}

func TestE2EReviewNeedingThreeCyclesPasses(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	faults := []string{"STORY_AUTOMATOR_SIM_FAULTS=review-cycles:3@1-1"}
	res, code := p.run(faults, append([]string{"run", "--agent", "sim", "--stories", "1", "--json"}, fast...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %v", code, res)
	}
	var cycles []int
	for _, a := range p.state().Unit("1-1").Step(orchestrator.StepReview).Attempts {
		cycles = append(cycles, a.Cycle)
	}
	if len(cycles) != 3 || cycles[2] != 3 || p.storyCommits()["1-1"] != 1 {
		t.Fatalf("review cycles %v, commits %v", cycles, p.storyCommits())
	}
}

func TestE2EReviewThatNeverPassesPausesTheRunAndResumeFinishesIt(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	faults := []string{"STORY_AUTOMATOR_SIM_FAULTS=review-never@1-1"}
	res, code := p.run(faults, append([]string{"run", "--agent", "sim", "--stories", "1", "--max-cycles", "2", "--on-escalation", "pause", "--json"}, fast...)...)
	if code != 1 || res["error"] != "run_escalated" || !strings.Contains(res["reason"].(string), "2 cycles") || res["action"] == "" {
		t.Fatalf("run exited %d: %v", code, res)
	}
	m := p.marker()
	if m == nil || m.Status != marker.StatusPaused || !strings.Contains(m.PauseReason, "review") {
		t.Fatalf("marker after escalation: %+v", m)
	}
	doc := readFile(t, res["stateFile"].(string))
	if !strings.Contains(doc, "## Escalation") || !strings.Contains(doc, "**What to do:**") {
		t.Fatalf("state document lacks the escalation:\n%s", doc)
	}
	// The human looked at the notes; the review passes now.
	res, code = p.run(nil, append([]string{"run", "--resume", "--json"}, fast...)...)
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v", code, res)
	}
	review := p.state().Unit("1-1").Step(orchestrator.StepReview)
	if n := len(review.Attempts); n != 3 || review.Attempts[2].Cycle != 3 {
		t.Fatalf("review attempts after resume: %+v", review.Attempts)
	}
	if p.storyCommits()["1-1"] != 1 || p.marker() != nil {
		t.Fatalf("commits %v marker %+v", p.storyCommits(), p.marker())
	}
}

func TestE2EKilledOrchestratorResumesWithoutRepeatingVerifiedSteps(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	c := p.cmd([]string{"STORY_AUTOMATOR_SIM_FAULTS=hang:dev:1@1-2"}, append([]string{"run", "--agent", "sim", "--json"}, fast...)...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("1.2's dev session to hang", func(st *orchestrator.State) bool {
		a := st.Unit("1-2").Step(orchestrator.StepDev).Attempts
		return len(a) == 1 && a[0].Session != "" && a[0].FinalState == ""
	})
	if res, code := p.run(nil, "run", "--agent", "sim", "--json"); code != 1 || res["error"] != "run_active" {
		t.Fatalf("a second run while one is active: %d %v", code, res)
	}
	if err := c.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	// Given no socket, status finds the run's own and calls it interrupted.
	status, _ := p.run([]string{"STORY_AUTOMATOR_TMUX_SOCKET="}, "status", "--json")
	orch, run := status["orchestrator"].(map[string]any), status["run"].(map[string]any)
	if orch["alive"] != false || len(status["sessions"].([]any)) != 1 || run["status"] != orchestrator.RunInterrupted ||
		run["resume"] != orchestrator.ResumeCommand {
		t.Fatalf("status after the kill: %v", status)
	}
	res, code := p.run(nil, append([]string{"run", "--resume", "--json"}, fast...)...)
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v", code, res)
	}
	ran := map[string]int{}
	for _, l := range p.simRuns() {
		ran[l.Story+"/"+l.Step]++
	}
	for _, step := range []string{"1-1/create", "1-1/dev", "1-1/automate", "1-1/review", "1-2/create", "1-3/dev", "1-4/review"} {
		if ran[step] != 1 {
			t.Fatalf("%s ran %d times: %v", step, ran[step], ran)
		}
	}
	if ran["1-2/dev"] != 2 {
		t.Fatalf("the killed dev step ran %d times, want the hung attempt and its redo", ran["1-2/dev"])
	}
	for _, k := range sample.Stories {
		if p.storyCommits()[k] != 1 {
			t.Fatalf("commits %v", p.storyCommits())
		}
	}
	if s, _ := p.run(nil, "status", "--json"); len(s["sessions"].([]any)) != 0 {
		t.Fatalf("sessions left after the resumed run: %v", s["sessions"])
	}
}

func TestE2EParallelRunKeepsTheDependencyChainInOrder(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	res, code := p.run([]string{"STORY_AUTOMATOR_SIM_DELAY=20ms"}, append([]string{"run", "--agent", "sim", "--parallel", "3", "--json"}, fast...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %v", code, res)
	}
	st := p.state()
	// 1.2 and 1.4 need 1.1, 1.3 needs 1.2 (the sample's epics say so).
	for story, dep := range map[string]string{"1-2": "1-1", "1-4": "1-1", "1-3": "1-2"} {
		started := st.Unit(story).Steps[0].Attempts[0].StartedAt
		doneAt := st.Unit(dep).Step(orchestrator.StepCommit).VerifiedAt
		if !after(t, started, doneAt) {
			t.Fatalf("%s started at %s, before %s was committed at %s", story, started, dep, doneAt)
		}
	}
	// The independent 1.2 and 1.4 really ran side by side.
	first2, last2 := storySpan(t, st.Unit("1-2"))
	first4, last4 := storySpan(t, st.Unit("1-4"))
	if !first2.Before(last4) || !first4.Before(last2) {
		t.Fatalf("1.2 ran %s–%s and 1.4 ran %s–%s: not side by side", first2, last2, first4, last4)
	}
	log := strings.Fields(p.git("log", "--reverse", "--format=%s"))
	order := strings.Join(log, " ")
	if i, j, k := strings.Index(order, "1.1:"), strings.Index(order, "1.2:"), strings.Index(order, "1.3:"); !(i < j && j < k) {
		t.Fatalf("commit order: %s", order)
	}
	p.checkCommitContents(st)
}

// checkCommitContents checks that every story's commit holds exactly its
// own story file, its own code and test plan, and sprint-status.yaml.
func (p *runProject) checkCommitContents(st *orchestrator.State) {
	p.t.Helper()
	slugs := map[string]string{"1-1": "1-1-greet-the-world", "1-2": "1-2-greet-by-name", "1-3": "1-3-shout-mode", "1-4": "1-4-farewell"}
	artifacts := "_bmad-output/implementation-artifacts/"
	for _, k := range sample.Stories {
		sha := st.Unit(k).Commit
		got := strings.Fields(p.git("show", "--name-only", "--format=", sha))
		want := []string{artifacts + slugs[k] + ".md", artifacts + "sprint-status.yaml",
			"sim-work/" + slugs[k] + ".tests.md", "sim-work/" + slugs[k] + ".txt"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			p.t.Errorf("story %s's commit %s holds %v, want %v", k, sha, got, want)
		}
	}
}

// storySpan is when a unit's first attempt started and its last one ended.
func storySpan(t *testing.T, u *orchestrator.Unit) (first, last time.Time) {
	t.Helper()
	for _, s := range u.Steps {
		for _, a := range s.Attempts {
			start, ok1 := marker.ParseTime(a.StartedAt)
			end, ok2 := marker.ParseTime(a.EndedAt)
			if !ok1 || !ok2 {
				t.Fatalf("attempt times %q %q", a.StartedAt, a.EndedAt)
			}
			if first.IsZero() || start.Before(first) {
				first = start
			}
			if end.After(last) {
				last = end
			}
		}
	}
	return first, last
}

func after(t *testing.T, a, b string) bool {
	t.Helper()
	ta, ok1 := marker.ParseTime(a)
	tb, ok2 := marker.ParseTime(b)
	if !ok1 || !ok2 {
		t.Fatalf("bad times %q %q", a, b)
	}
	return !ta.Before(tb)
}

func TestE2EDryRunPrintsThePlanAndChangesNothing(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	res, code := p.run(nil, "run", "--agent", "sim", "--dry-run", "--json")
	if code != 0 || res["dryRun"] != true {
		t.Fatalf("dry run exited %d: %v", code, res)
	}
	waves := res["waves"].([]any)
	if len(waves) != 4 || len(waves[1].([]any)) != 2 {
		t.Fatalf("waves %v", waves)
	}
	if p.marker() != nil || p.git("status", "--porcelain") != "" {
		t.Fatal("a dry run changed the project")
	}
}

func TestE2ESIGINTPausesTheRunKillsItsSessionAndResumeFinishes(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	c := p.cmd([]string{"STORY_AUTOMATOR_SIM_FAULTS=hang:dev:1@1-1"}, append([]string{"run", "--agent", "sim", "--stories", "1", "--json"}, fast...)...)
	var out strings.Builder
	c.Stdout = &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("1.1's dev session to hang", func(st *orchestrator.State) bool {
		a := st.Unit("1-1").Step(orchestrator.StepDev).Attempts
		return len(a) == 1 && a[0].Session != ""
	})
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := c.Wait()
	res := lastJSON(t, out.String(), "")
	if code := c.ProcessState.ExitCode(); code != 1 || res["error"] != "run_interrupted" {
		t.Fatalf("after SIGINT: exit %d (%v) %v", code, err, res)
	}
	if m := p.marker(); m == nil || m.Status != marker.StatusPaused || !strings.Contains(m.PauseReason, "interrupted") {
		t.Fatalf("marker after SIGINT: %+v", m)
	}
	if s, _ := p.run(nil, "status", "--json"); len(s["sessions"].([]any)) != 0 {
		t.Fatalf("SIGINT left the child session running: %v", s["sessions"])
	}
	dev := p.state().Unit("1-1").Step(orchestrator.StepDev)
	if dev.Status != orchestrator.StatusPending || dev.Attempts[0].FinalState != orchestrator.FinalInterrupted {
		t.Fatalf("dev after SIGINT: %+v", dev)
	}
	if res, code := p.run(nil, append([]string{"run", "--resume", "--json"}, fast...)...); code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v", code, res)
	}
}

func TestE2ERunOnATerminalRedrawsLiveProgress(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	c := p.cmd(nil, append([]string{"run", "--agent", "sim", "--stories", "1,2"}, fast...)...)
	tty, err := pty.StartWithSize(c, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var screen bytes.Buffer
	_, _ = io.Copy(&screen, tty) // ends with EIO once the run exits and closes the terminal
	if err := c.Wait(); err != nil {
		t.Fatalf("run on a terminal: %v\n%s", err, screen.String())
	}
	out := screen.String()
	for _, want := range []string{"\x1b[", "0/2 stories done", "2/2 stories done", "elapsed", "run " + p.state().RunID + " done"} {
		if !strings.Contains(out, want) {
			t.Fatalf("terminal output lacks %q:\n%q", want, out)
		}
	}
	if strings.Contains(out, `{"`) {
		t.Fatalf("JSON on a terminal without --json:\n%s", out)
	}
}

func TestE2EFalseCompletionIsCaughtByTheVerifierAndRetried(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	faults := []string{"STORY_AUTOMATOR_SIM_FAULTS=false:create:1@1-1"}
	res, code := p.run(faults, append([]string{"run", "--agent", "sim", "--stories", "1", "--json"}, fast...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %v", code, res)
	}
	create := p.state().Unit("1-1").Step(orchestrator.StepCreate)
	if len(create.Attempts) != 2 || create.Attempts[0].FinalState != "incomplete" || !strings.Contains(create.Attempts[0].Detail, "no story file") {
		t.Fatalf("create attempts %+v", create.Attempts)
	}
}

// The story out of review cycles is parked (its work on its ref, the tree
// clean); accepted by hand, --resume brings its work back and commits it.
func TestE2EAStoryAcceptedByHandAfterAnEscalationResumesWithoutAnotherReview(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	faults := []string{"STORY_AUTOMATOR_SIM_FAULTS=review-never@1-1"}
	if res, code := p.run(faults, append([]string{"run", "--agent", "sim", "--stories", "1", "--max-cycles", "1", "--json"}, fast...)...); code != 10 || res["outcome"] != "done_with_parked" {
		t.Fatalf("run exited %d: %v", code, res)
	}
	for _, l := range strings.Split(strings.TrimSpace(p.git("status", "--porcelain", "--untracked-files=all")), "\n") {
		if l != "" && !strings.HasSuffix(l, "sprint-status.yaml") {
			t.Fatalf("the parked story's work left in the tree: %q", l)
		}
	}
	// What the escalation advises: accept the story by setting it done in sprint-status.yaml.
	sprint := readFile(t, p.sprintPath())
	accepted := strings.Replace(sprint, "1-1-greet-the-world: in-progress", "1-1-greet-the-world: done", 1)
	if accepted == sprint {
		t.Fatalf("sprint-status.yaml after the escalation:\n%s", sprint)
	}
	if err := os.WriteFile(p.sprintPath(), []byte(accepted), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, code := p.run(faults, append([]string{"run", "--resume", "--json"}, fast...)...); code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v", code, res)
	}
	reviews := 0
	for _, l := range p.simRuns() {
		if l.Step == "review" {
			reviews++
		}
	}
	if reviews != 1 || p.storyCommits()["1-1"] != 1 {
		t.Fatalf("reviews %d, commits %v", reviews, p.storyCommits())
	}
}

// A dev agent that left its file out of the story's File List: before the
// commit the run adds it (after the items already there, in their style), so
// the committed story file lists every path the commit holds.
func TestE2ECommitKeepsTheStorysFileListTrue(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	faults := []string{"STORY_AUTOMATOR_SIM_FAULTS=unlisted:dev@1-1"}
	res, code := p.run(faults, append([]string{"run", "--agent", "sim", "--stories", "1", "--json"}, fast...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %v", code, res)
	}
	files := strings.Fields(p.git("show", "--name-only", "--format=", "HEAD"))
	var storyFile, code1 string
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, ".md") && strings.Contains(f, "1-1-") && !strings.HasPrefix(f, "sim-work/"):
			storyFile = f
		case strings.HasPrefix(f, "sim-work/") && strings.HasSuffix(f, ".txt"):
			code1 = f
		}
	}
	if storyFile == "" || code1 == "" {
		t.Fatalf("the commit holds %v", files)
	}
	committed := p.git("show", "HEAD:"+storyFile)
	list := committed[strings.Index(committed, "### File List"):]
	if !strings.Contains(list, code1) {
		t.Fatalf("the committed File List does not name %s:\n%s", code1, list)
	}
	for _, f := range files {
		if f != storyFile && !strings.HasSuffix(f, "sprint-status.yaml") && !strings.Contains(list, f) {
			t.Fatalf("the committed File List leaves out %s:\n%s", f, list)
		}
	}
	if st := p.git("status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Fatalf("the work tree is not clean after the commit:\n%s", st)
	}
}
