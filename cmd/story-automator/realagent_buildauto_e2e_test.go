package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/lazyre"
	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/internal/testtier"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/workflows"
)

// The real Claude Code, confined as `session spawn` confines every child,
// offline against model-sim's build-auto script, on a project the real BMAD
// 6.12 installer made: sent the worker skill in its own skill form, it loads
// the installed SKILL.md, runs the renderer that SKILL.md names under uv in
// its sandbox, reads the workflow.md it printed and acts out the worker's
// file work through its own tools. The spec ends done with its baseline,
// the work is one commit, the board is as the worker found it.
func TestRealClaudeRunsTheRealBuildAutoSkill(t *testing.T) {
	t.Parallel()
	realBuildAuto(t, "claude", offline.Claude, ".claude/skills", true)
}

// The control that shows the confinement check can fail: spawned with
// --sandbox off, the same worker's shell shows no sandbox.
func TestRealClaudeRunsTheRealBuildAutoSkillUnconfined(t *testing.T) {
	t.Parallel()
	realBuildAuto(t, "claude", offline.Claude, ".claude/skills", false)
}

// The same for Codex, in its workspace-write sandbox.
func TestRealCodexRunsTheRealBuildAutoSkill(t *testing.T) {
	t.Parallel()
	realBuildAuto(t, "codex", offline.Codex, ".agents/skills", true)
}

// The same for Gemini CLI, with its tool sandboxing inside this tool's
// bubblewrap: in prompt mode (-p) it runs no slash command, so the prompt
// names the skill and the model loads it with activate_skill, which
// Gemini CLI allows a headless child only by the child's policy. Gemini
// CLI reads a trusted project's skills from .agents/skills (and
// .gemini/skills).
func TestRealGeminiRunsTheRealBuildAutoSkill(t *testing.T) {
	t.Parallel()
	realBuildAuto(t, "gemini", offline.Gemini, ".agents/skills", true)
}

// Its control: with --sandbox off (--yolo) the shell shares the test's
// network namespace.
func TestRealGeminiRunsTheRealBuildAutoSkillUnconfined(t *testing.T) {
	t.Parallel()
	realBuildAuto(t, "gemini", offline.Gemini, ".agents/skills", false)
}

// The same for GitHub Copilot CLI, wrapped whole in this tool's sandbox:
// in prompt mode (-p) a /skill prompt reaches the model as text, so the
// prompt names the skill and the model loads it with its skill tool, which
// hands SKILL.md over as a <skill-context> message; the review runs in its
// task tool with mode "sync". BMAD installs its skills for it in
// .agents/skills.
func TestRealCopilotRunsTheRealBuildAutoSkill(t *testing.T) {
	t.Parallel()
	realBuildAuto(t, "copilot", offline.Copilot, ".agents/skills", true)
}

// The same for OpenCode, wrapped whole in this tool's sandbox: `opencode
// run` never hands a message to its command parser, so the model loads the
// skill with its skill tool (which lists the skill's files with ripgrep: rg
// on PATH, or it downloads one) and reviews in its task tool.
func TestRealOpenCodeRunsTheRealBuildAutoSkill(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("rg"); err != nil {
		testtier.Missing(t, "ripgrep (rg), which OpenCode's skill tool runs (apt-get install ripgrep)")
	}
	realBuildAuto(t, "opencode", offline.OpenCode, ".agents/skills", true)
}

// buildAutoStory is the first story of newBMAD612Project's board, as BMAD's
// sprint_plan.py keyed it.
const buildAutoStory = "1-1-sign-up"

// realBuildAuto runs the worker skill through the real CLI in a child that
// `session spawn` starts, confined (or with --sandbox off), and checks the
// skill path and its outcome; skills is the folder the CLI reads a
// project's skills from.
func realBuildAuto(t *testing.T, agentName string, home func(offline.Config) (offline.Env, error), skills string, wantConfined bool) {
	cli := realagent.Require(t, agentName)
	rp, in := newBMAD612Project(t)
	root, err := filepath.EvalSymlinks(rp.root)
	if err != nil {
		t.Fatal(err)
	}
	rp.root = root
	board := filepath.Join(root, "_bmad-output", "implementation-artifacts", "sprint-status.yaml")
	before, err := os.ReadFile(board)
	if err != nil || !strings.Contains(string(before), buildAutoStory+":") {
		t.Fatalf("the board has no %s (%v):\n%s", buildAutoStory, err, before)
	}
	base := strings.TrimSpace(rp.git("rev-parse", "HEAD"))

	srv := startModelSim(t, modelsim.BuildAutoScript)
	prof, _ := agent.LookupProfile(agentName)
	var h string
	if prof.Sandbox.Kind == agent.SandboxWrapped {
		// Its sandbox's /tmp is private: its home lies outside, as a user's.
		h = wrappedHome(t)
	} else {
		h = realHome(t)
	}
	oenv, err := home(offline.Config{Home: h, BaseURL: srv.URL(), Trusted: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+filepath.Dir(in.UV)+":"+os.Getenv("PATH"))
	prompt, ok := agent.SkillPrompt(agentName, workflows.BuildAutoSkill, buildAutoStory)
	if !ok {
		t.Fatalf("%s has no skill form", agentName)
	}
	sp := &sessionProject{t: t, bin: rp.bin, root: root, socket: rp.socket,
		sessionsDir: filepath.Join(root, ".story-automator", "sessions")}
	args := []string{"session", "spawn", "--step", "dev", "--story", "1.1", "--agent", agentName, "--prompt", prompt}
	if !wantConfined {
		args = append(args, "--sandbox", "off")
	}
	res, code := sp.run(env, args...)
	name := stringOr(res["session"])
	if code != 0 || name == "" {
		t.Fatalf("spawn: %d %v", code, res)
	}
	t.Logf("%s: skill form %q, spawned %v", agentName, prompt, res)
	res, code = sp.run(env, "monitor-session", name, "--timeout", "300s")
	seen := time.Now()
	if code != 0 || res["finalState"] != "completed" {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, tail(string(out), 3000))
	}
	ex := srv.Exchanges()
	var last time.Time
	for _, e := range ex {
		if !e.Side {
			last = e.At
		}
	}
	// Measured, not asserted: from the worker's last turn to the child seen done.
	t.Logf("%s: the worker's last turn at %s, the child seen %s (%s) %s later",
		agentName, last.UTC().Format("15:04:05.000"), res["finalState"], res["reason"], seen.Sub(last).Round(time.Millisecond))

	// The worker launches blocking subagents: the CLI, started as a child
	// is, offers its model the tools the agent table names for them (what
	// doctor's subagents check reports).
	for _, e := range ex {
		if c := e.Conversation(); c != nil && !e.Side {
			for _, tool := range prof.Subagents.Tools {
				if !c.HasTool(tool) {
					t.Errorf("%s offered no %s: %v", agentName, tool, c.Tools)
				}
			}
			break
		}
	}
	checkReviewSubagent(t, agentName, ex, filepath.Join(root, "_bmad-output", "implementation-artifacts", "spec-"+buildAutoStory+".md"))
	texts := exchangeTexts(ex)
	// The CLI found and loaded the installed skill: its text reached the model.
	skill := skillBody(t, filepath.Join(root, skills))
	if !strings.Contains(texts, skill) {
		t.Errorf("no request carried the installed SKILL.md's text:\n%s", skill)
	}
	// The shell the renderer ran in was inside the CLI's sandbox: it shows
	// a variable the sandbox sets, or a network namespace other than this
	// test's (a sandbox that cuts the network).
	confined := false
	for _, v := range prof.Sandbox.InsideEnv {
		confined = confined || strings.Contains(texts, "\n"+v+"=")
	}
	ownNet, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	shellNet := netnsLine().FindString(texts)
	if shellNet == "" {
		t.Errorf("the worker's shell printed no network namespace")
	}
	t.Logf("%s: the shell's network namespace %s, this test's %s", agentName, shellNet, ownNet)
	confined = confined || (shellNet != "" && shellNet != ownNet)
	if m := tmpdirLine().FindString(texts); m != "" {
		t.Logf("%s: uv's temporary files under %s", agentName, m)
	}
	if confined != wantConfined {
		t.Errorf("the shell showed %v inside %s's sandbox: %v, want %v", prof.Sandbox.InsideEnv, agentName, confined, wantConfined)
	}
	// The real renderer ran under uv in the sandbox and its workflow.md was read.
	workflow := renderedWorkflow(t, root)
	if !strings.Contains(texts, "Read and follow "+workflow) && !strings.Contains(texts, "read and follow "+workflow) {
		t.Errorf("no tool output printed %s: render_skill.py did not run under uv", workflow)
	}
	artifacts := filepath.Join(root, "_bmad-output", "implementation-artifacts")
	if !strings.Contains(texts, "# Build Auto Workflow") || !strings.Contains(texts, artifacts+"/bmad-build-auto-result-") {
		t.Errorf("the rendered workflow.md's text did not reach the model")
	}

	spec, err := workflows.ReadSpec(filepath.Join(artifacts, "spec-"+buildAutoStory+".md"))
	if err != nil || spec.Status != workflows.SpecDone || spec.BaselineRevision != base ||
		spec.Result == nil || spec.Result.Status != workflows.SpecDone {
		t.Fatalf("spec %+v (%v): want done from baseline %s with a done Auto Run Result", spec, err, base)
	}
	commits := strings.Fields(rp.git("rev-list", base+"..HEAD"))
	subject := rp.git("log", "-1", "--format=%s")
	files := rp.git("show", "--name-only", "--format=", "HEAD")
	if len(commits) != 1 || !strings.Contains(subject, buildAutoStory) ||
		!strings.Contains(files, "src/greeting.py") || !strings.Contains(files, "tests/test_greeting.py") {
		t.Errorf("commits %v, subject %q, files:\n%s", commits, subject, files)
	}
	if dirty := rp.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Errorf("the worker left the tree dirty:\n%s", dirty)
	}
	if after, err := os.ReadFile(board); err != nil || string(after) != string(before) {
		t.Errorf("the worker changed the board (%v):\n%s", err, after)
	}
}

// reviewVerdict is what the build-auto script's review subagent answers.
const reviewVerdict = "REVIEW VERDICT: clean (greet and its test agree)"

// checkReviewSubagent checks the worker's review ran in a blocking
// subagent, as BMAD 6.12's review layers do: the launch went out through
// the CLI's subagent tool, the subagent answered in a conversation of its
// own, and its verdict came back to the worker's turn, which wrote it into
// the spec.
func checkReviewSubagent(t *testing.T, agentName string, ex []modelsim.Exchange, spec string) {
	t.Helper()
	launched, answered := false, false
	for _, e := range ex {
		launched = launched || (e.Call != nil && e.Call.Subagent != "")
		answered = answered || e.Text == reviewVerdict
	}
	data, err := os.ReadFile(spec)
	if !launched || !answered || err != nil || !strings.Contains(string(data), "Review: "+reviewVerdict) {
		t.Errorf("%s: the review subagent launched %v, answered %v, its verdict in the spec %v (%v):\n%s",
			agentName, launched, answered, strings.Contains(string(data), reviewVerdict), err, exchangeSummary(ex))
	}
}

// netnsLine finds the network namespace the worker's shell printed.
var netnsLine = lazyre.New(`net:\[[0-9]+\]`)

// tmpdirLine finds the TMPDIR the worker's shell printed.
var tmpdirLine = lazyre.New(`(?m)^TMPDIR=\S+`)

// exchangeTexts joins what model-sim received: every user turn and tool
// output of every main request.
func exchangeTexts(ex []modelsim.Exchange) string {
	var b strings.Builder
	for _, e := range ex {
		c := e.Conversation()
		if c == nil || e.Side {
			continue
		}
		for _, m := range c.Messages {
			b.WriteString(m.Text + "\n" + m.Result + "\n")
		}
	}
	return b.String()
}

// skillBody is the installed worker skill's SKILL.md in the skill folder
// dir, without its frontmatter (which a CLI may leave out).
func skillBody(t *testing.T, dir string) string {
	t.Helper()
	if data, err := os.ReadFile(filepath.Join(dir, workflows.BuildAutoSkill, "SKILL.md")); err == nil {
		text := string(data)
		if rest, ok := strings.CutPrefix(text, "---\n"); ok {
			if _, body, ok := strings.Cut(rest, "\n---\n"); ok {
				text = body
			}
		}
		return strings.TrimSpace(text)
	}
	t.Fatalf("the skill folder %q holds no %s", dir, workflows.BuildAutoSkill)
	return ""
}

// renderedWorkflow is the workflow.md BMAD's renderer wrote for the worker.
func renderedWorkflow(t *testing.T, root string) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(root, "_bmad", "render", workflows.BuildAutoSkill, "*", "*", "workflow.md"))
	if len(found) != 1 {
		t.Fatalf("rendered workflow.md files: %v, want one: render_skill.py did not run", found)
	}
	return found[0]
}
