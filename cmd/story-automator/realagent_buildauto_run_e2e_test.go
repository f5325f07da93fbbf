package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/internal/testtier"
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
	realBuildAutoRun(t, "claude", offline.Claude, ".claude/skills")
}

// The same with the real Codex: the run dispatches `$bmad-build-auto KEY`,
// Codex inlines the installed SKILL.md from .agents/skills and runs the
// renderer under uv in its workspace-write sandbox.
func TestRealCodexRunTakesAStoryThroughTheBuildAutoSkill(t *testing.T) {
	t.Parallel()
	realBuildAutoRun(t, "codex", offline.Codex, ".agents/skills")
}

// The same with the real Gemini CLI: the run's prompt names the skill, the
// model loads it with activate_skill (from .agents/skills), and the
// renderer runs under uv in Gemini CLI's tool sandbox inside this tool's
// bubblewrap.
func TestRealGeminiRunTakesAStoryThroughTheBuildAutoSkill(t *testing.T) {
	t.Parallel()
	realBuildAutoRun(t, "gemini", offline.Gemini, ".agents/skills")
}

// The same with the real GitHub Copilot CLI and the real OpenCode, each
// wrapped whole in this tool's sandbox: the run's prompt names the skill,
// the model loads it with the CLI's skill tool (from .agents/skills) and
// reviews in its task tool.
func TestRealCopilotRunTakesAStoryThroughTheBuildAutoSkill(t *testing.T) {
	t.Parallel()
	realBuildAutoRun(t, "copilot", offline.Copilot, ".agents/skills")
}

func TestRealOpenCodeRunTakesAStoryThroughTheBuildAutoSkill(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("rg"); err != nil {
		testtier.Missing(t, "ripgrep (rg), which OpenCode's skill tool runs (apt-get install ripgrep)")
	}
	realBuildAutoRun(t, "opencode", offline.OpenCode, ".agents/skills")
}

// realBuildAutoRun runs `story-automator run --agent agentName` on story
// 1.1 of a real 6.12 project, offline against model-sim's build-auto
// script, and checks the real skill path ran and the story landed: one
// commit, the spec done, the board right, the tree clean; skills is the
// folder the CLI reads a project's skills from.
func realBuildAutoRun(t *testing.T, agentName string, home func(offline.Config) (offline.Env, error), skills string) {
	cli := realagent.Require(t, agentName)
	p, in := buildAutoProject(t, "")
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	srv := startModelSim(t, modelsim.BuildAutoScript)
	var h string
	if prof, _ := agent.LookupProfile(agentName); prof.Sandbox.Kind == agent.SandboxWrapped {
		// Its sandbox's /tmp is private: its home lies outside, as a user's.
		h = wrappedHome(t)
	} else {
		h = realHome(t)
	}
	oenv, err := home(offline.Config{Home: h, BaseURL: srv.URL(), Trusted: []string{root, p.root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+filepath.Dir(in.UV)+":"+os.Getenv("PATH"))
	res, code := p.run(env, "run", "--agent", agentName, "--stories", "1.1", "--json", "--completion-rechecks", "1")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run: exit %d %v\n%s", code, res, p.stateLog())
	}
	checkReviewSubagent(t, agentName, srv.Exchanges(), filepath.Join(root, "_bmad-output", "implementation-artifacts", "spec-1-1-sign-up.md"))
	texts := exchangeTexts(srv.Exchanges())
	if skill := skillBody(t, filepath.Join(root, skills)); !strings.Contains(texts, skill) {
		t.Errorf("no request carried the installed SKILL.md's text: the real skill path did not run")
	}
	// The real renderer ran under uv in the child's sandbox and the model
	// was given the workflow.md it printed.
	if workflow := renderedWorkflow(t, root); !strings.Contains(strings.ToLower(texts), "read and follow "+strings.ToLower(workflow)) ||
		!strings.Contains(texts, "# Build Auto Workflow") {
		t.Errorf("the rendered %s did not reach the model: render_skill.py did not run under uv", workflow)
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
	if out := p.validateBoard(in); !strings.Contains(out, `"valid": true`) {
		t.Errorf("BMAD's sprint_plan.py validate refused the board: %s", out)
	}
	logDoneToDispatch(t, st)
	if dev := st.Unit("1-1").Step(orchestrator.StepDev); len(dev.Attempts) > 0 {
		t.Logf("%s: the worker's attempt took %dms wall, %dms in the agent", agentName, dev.Attempts[0].WallMs, dev.Attempts[0].AgentMs)
	}
}
