package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/orchestrator"
)

// A `run` with the real Claude Code on a project the real BMAD 6.12
// installer made, offline against model-sim's build-auto script: the run
// dispatches the worker skill in Claude Code's form, the CLI loads the
// installed SKILL.md and runs BMAD's renderer under uv in its sandbox, the
// worker's spec ends done with its commit, and the run lands the story as
// one commit with the board right (BMAD's validate accepts it).
func TestRealClaudeRunTakesAStoryThroughTheBuildAutoSkill(t *testing.T) {
	t.Parallel()
	cli := realagent.Require(t, "claude")
	p, in := buildAutoProject(t, "")
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
	res, code := p.run(env, "run", "--agent", "claude", "--stories", "1.1", "--json", "--completion-rechecks", "1")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run: exit %d %v\n%s", code, res, p.stateLog())
	}
	if skill := skillBody(t, filepath.Join(root, claudeSkills(t))); !strings.Contains(exchangeTexts(srv.Exchanges()), skill) {
		t.Errorf("no request carried the installed SKILL.md's text: the real skill path did not run")
	}
	st := p.state()
	if u := st.Unit("1-1"); u.Spec != "_bmad-output/implementation-artifacts/spec-1-1-sign-up.md" {
		t.Errorf("spec %q", u.Spec)
	}
	if commits := p.storyCommits(); commits["1-1"] != 1 || len(commits) != 1 {
		t.Fatalf("story commits %v", commits)
	}
	sha := strings.TrimSpace(p.git("log", "--format=%H", "--grep=Story-Automator-Story: 1-1", "-1"))
	msg, files := p.git("log", "-1", "--format=%B", sha), p.git("show", "--name-only", "--format=", sha)
	if !strings.HasPrefix(msg, "1-1-sign-up: Sign up") || !strings.Contains(files, "src/greeting.py") ||
		!strings.Contains(files, "spec-1-1-sign-up.md") || !strings.Contains(files, "sprint-status.yaml") {
		t.Errorf("the story's commit:\n%s\n%s", msg, files)
	}
	board := p.board()
	if boardStatus(board, "1-1-sign-up") != "done" || boardStatus(board, "epic-1") != "in-progress" {
		t.Errorf("board:\n%s", board)
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Errorf("the tree is dirty:\n%s", dirty)
	}
	t.Logf("sprint_plan.py validate: %s", strings.TrimSpace(p.validateBoard(in)))
	logDoneToDispatch(t, st)
	if dev := st.Unit("1-1").Step(orchestrator.StepDev); len(dev.Attempts) > 0 {
		t.Logf("claude: the worker's attempt took %dms wall, %dms in the agent", dev.Attempts[0].WallMs, dev.Attempts[0].AgentMs)
	}
}

// claudeSkills is where Claude Code reads a project's skills.
func claudeSkills(t *testing.T) string {
	t.Helper()
	p, ok := agent.LookupProfile("claude")
	if !ok || p.SkillDirs["project"] == "" {
		t.Fatal("the claude profile names no project skill folder")
	}
	return p.SkillDirs["project"]
}
