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
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/workflows"
)

// The real Claude Code, confined as `session spawn` confines every child,
// offline against model-sim's retrospective script, on a project the real
// BMAD 6.12 installer made whose epic 1 is done: sent `bmad-retrospective
// -H 1` in its skill form (as the run sends it), it loads the installed
// SKILL.md, runs the customization resolver SKILL.md names under uv in its
// sandbox and writes the retrospective's document. The run's side then
// reads its verdict and sets the board the child left (BMAD's validate
// accepts it).
func TestRealClaudeRunsTheRealRetrospectiveSkill(t *testing.T) {
	t.Parallel()
	realRetro(t, "claude", offline.Claude)
}

// The same for Codex, in its workspace-write sandbox ($bmad-retrospective -H 1).
func TestRealCodexRunsTheRealRetrospectiveSkill(t *testing.T) {
	t.Parallel()
	realRetro(t, "codex", offline.Codex)
}

// realRetro runs the retrospective skill through the real CLI in a child
// that `session spawn` confines, and settles it as the run does.
func realRetro(t *testing.T, agentName string, home func(offline.Config) (offline.Env, error)) {
	cli := realagent.Require(t, agentName)
	rp, in := retroProject(t)
	root, err := filepath.EvalSymlinks(rp.root)
	if err != nil {
		t.Fatal(err)
	}
	rp.root = root
	srv := startModelSim(t, modelsim.RetroScript)
	oenv, err := home(offline.Config{Home: realHome(t), BaseURL: srv.URL(), Trusted: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+filepath.Dir(in.UV)+":"+os.Getenv("PATH"))
	proj, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	retro := bmad.Retro{Files: bmad.Files{P: proj}}
	prompt, err := retro.Prompt(agentName, "1")
	if want, _ := agent.SkillPrompt(agentName, bmad.RetroSkill, "-H 1"); err != nil || prompt != want {
		t.Fatalf("prompt %q, %v", prompt, err)
	}
	sp := &sessionProject{t: t, bin: rp.bin, root: root, socket: rp.socket,
		sessionsDir: filepath.Join(root, ".story-automator", "sessions")}
	res, code := sp.run(env, "session", "spawn", "--step", "retro", "--epic", "1", "--story", "1", "--agent", agentName, "--prompt", prompt)
	name := stringOr(res["session"])
	if code != 0 || name == "" {
		t.Fatalf("spawn: %d %v", code, res)
	}
	res, code = sp.run(env, "monitor-session", name, "--timeout", "300s")
	if code != 0 || res["finalState"] != "completed" {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, tail(string(out), 3000))
	}
	texts := exchangeTexts(srv.Exchanges())
	prof, _ := agent.LookupProfile(agentName)
	skill, err := os.ReadFile(filepath.Join(root, prof.SkillDirs["project"], bmad.RetroSkill, "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(skill)
	if rest, ok := strings.CutPrefix(body, "---\n"); ok {
		if _, b, ok := strings.Cut(rest, "\n---\n"); ok {
			body = b
		}
	}
	if !strings.Contains(texts, strings.TrimSpace(body)) {
		t.Errorf("no request carried the installed retrospective SKILL.md's text")
	}
	if !strings.Contains(texts, "activation_steps_prepend") {
		t.Errorf("the customization resolver's output did not reach the model: it did not run under uv")
	}
	confined := false
	for _, v := range prof.Sandbox.InsideEnv {
		confined = confined || strings.Contains(texts, "\n"+v+"=")
	}
	if !confined {
		t.Errorf("the shell the resolver ran in showed none of %v: not inside %s's sandbox", prof.Sandbox.InsideEnv, agentName)
	}
	v, err := retro.Settle("1", "1")
	if err != nil || v.Verdict != workflows.VerdictAcceptedOpenItems || len(v.ActionItems) != 2 || v.Board == "" {
		t.Fatalf("settle %+v, %v", v, err)
	}
	t.Logf("%s: skill form %q, uv under its sandbox, document %s, board: %s", agentName, prompt, v.Document, v.Board)
	validateBoard(t, rp, in)
}
