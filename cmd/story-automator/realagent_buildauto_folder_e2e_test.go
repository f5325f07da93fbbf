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
	"github.com/story-automator/story-automator/workflows"
)

// The real Claude Code, confined as `session spawn` confines every child,
// offline against model-sim's build-auto script, sent the worker skill with
// a folder+id dispatch (stories mode) on a project the real BMAD 6.12
// installer made: it loads the installed SKILL.md, runs the renderer under
// uv, reads the printed workflow.md (which holds the folder+id route) and
// writes the story's spec in the folder, done from its baseline, in one
// commit; stories.yaml and the board are as the worker found them.
func TestRealClaudeRunsTheRealBuildAutoSkillInFolderMode(t *testing.T) {
	t.Parallel()
	realBuildAutoFolder(t, "claude", offline.Claude, ".claude/skills", false)
}

// A spec_checkpoint story's two legs through the real Claude Code: the
// dispatch with "Halt after planning." leaves the spec ready-for-dev and
// nothing committed; the same dispatch without it takes that spec to done.
func TestRealClaudeRunsTheRealBuildAutoSkillInFolderModeInTwoLegs(t *testing.T) {
	t.Parallel()
	realBuildAutoFolder(t, "claude", offline.Claude, ".claude/skills", true)
}

// The same for Codex, in its workspace-write sandbox.
func TestRealCodexRunsTheRealBuildAutoSkillInFolderMode(t *testing.T) {
	t.Parallel()
	realBuildAutoFolder(t, "codex", offline.Codex, ".agents/skills", false)
}

// The same for Gemini CLI, which is told to load the skill with
// activate_skill (it runs no slash command in prompt mode).
func TestRealGeminiRunsTheRealBuildAutoSkillInFolderMode(t *testing.T) {
	t.Parallel()
	realBuildAutoFolder(t, "gemini", offline.Gemini, ".agents/skills", false)
}

// folderSpec is the spec folder realBuildAutoFolder adds to the project.
const folderSpec = "_bmad-output/specs/spec-billing"

// realBuildAutoFolder dispatches story 2 of a spec folder through the real
// CLI, first with "Halt after planning." when halt is set.
func realBuildAutoFolder(t *testing.T, agentName string, home func(offline.Config) (offline.Env, error), skills string, halt bool) {
	cli := realagent.Require(t, agentName)
	rp, in := newBMAD612Project(t)
	root, err := filepath.EvalSymlinks(rp.root)
	if err != nil {
		t.Fatal(err)
	}
	rp.root = root
	folder := filepath.Join(root, folderSpec)
	stories := "- id: \"1\"\n  title: Issue invoices\n  description: A customer receives an invoice.\n" +
		"- id: \"2\"\n  title: Refund an invoice\n  description: A clerk refunds a paid invoice.\n  spec_checkpoint: true\n"
	for name, text := range map[string]string{"SPEC.md": "---\nid: billing\ncompanions: []\nsources: []\n---\n\n# Billing\n", workflows.StoriesFile: stories} {
		if err := os.MkdirAll(folder, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rp.git("add", "-A")
	rp.git("commit", "-q", "-m", "the billing spec")
	base := strings.TrimSpace(rp.git("rev-parse", "HEAD"))
	board := filepath.Join(root, "_bmad-output", "implementation-artifacts", "sprint-status.yaml")
	before, err := os.ReadFile(board)
	if err != nil {
		t.Fatal(err)
	}

	srv := startModelSim(t, modelsim.BuildAutoScript)
	oenv, err := home(offline.Config{Home: realHome(t), BaseURL: srv.URL(), Trusted: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+filepath.Dir(in.UV)+":"+os.Getenv("PATH"))
	sp := &sessionProject{t: t, bin: rp.bin, root: root, socket: rp.socket,
		sessionsDir: filepath.Join(root, ".story-automator", "sessions")}
	specPath := filepath.Join(folder, "stories", "2-refund-an-invoice.md")
	dispatch := func(step, args string) {
		t.Helper()
		prompt, ok := agent.SkillPrompt(agentName, workflows.BuildAutoSkill, args)
		if !ok {
			t.Fatalf("%s has no skill form", agentName)
		}
		res, code := sp.run(env, "session", "spawn", "--step", step, "--story", "1.1", "--agent", agentName, "--prompt", prompt)
		name := stringOr(res["session"])
		if code != 0 || name == "" {
			t.Fatalf("spawn: %d %v", code, res)
		}
		t.Logf("%s: skill form %q", agentName, prompt)
		res, code = sp.run(env, "monitor-session", name, "--timeout", "300s")
		if code != 0 || res["finalState"] != "completed" {
			out, _ := os.ReadFile(stringOr(res["outputFile"]))
			t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, tail(string(out), 3000))
		}
	}
	if halt {
		dispatch("create", "Spec folder: "+folderSpec+". Story id: 2. Halt after planning.")
		spec, err := workflows.ReadSpec(specPath)
		if err != nil || spec.Status != workflows.SpecReadyForDev || spec.BaselineRevision != "" || spec.Result == nil || spec.Result.Status != workflows.SpecReadyForDev {
			t.Fatalf("after planning: spec %+v (%v)", spec, err)
		}
		if head := strings.TrimSpace(rp.git("rev-parse", "HEAD")); head != base {
			t.Fatalf("planning committed")
		}
	}
	dispatch("dev", "Spec folder: "+folderSpec+". Story id: 2.")

	texts := exchangeTexts(srv.Exchanges())
	if skill := skillBody(t, filepath.Join(root, skills)); !strings.Contains(texts, skill) {
		t.Errorf("no request carried the installed SKILL.md's text:\n%s", skill)
	}
	workflow := renderedWorkflow(t, root)
	if !strings.Contains(texts, "Read and follow "+workflow) && !strings.Contains(texts, "read and follow "+workflow) {
		t.Errorf("no tool output printed %s: render_skill.py did not run under uv", workflow)
	}
	if !strings.Contains(texts, "{spec_folder}/stories/{story_id}-{slug}.md") {
		t.Errorf("the rendered workflow's folder+id route did not reach the model")
	}

	spec, err := workflows.ReadSpec(specPath)
	if err != nil || spec.Status != workflows.SpecDone || spec.BaselineRevision != base || spec.Result == nil || spec.Result.Status != workflows.SpecDone {
		t.Fatalf("spec %+v (%v): want done from baseline %s with a done Auto Run Result", spec, err, base)
	}
	checkReviewSubagent(t, agentName, srv.Exchanges(), specPath)
	if found, _ := filepath.Glob(filepath.Join(folder, "stories", "*.md")); len(found) != 1 {
		t.Errorf("story files %v: the worker wrote another story's", found)
	}
	commits := strings.Fields(rp.git("rev-list", base+"..HEAD"))
	subject := rp.git("log", "-1", "--format=%s")
	files := rp.git("show", "--name-only", "--format=", "HEAD")
	if len(commits) != 1 || !strings.HasPrefix(subject, "2-refund-an-invoice: ") || !strings.Contains(files, "src/greeting.py") ||
		!strings.Contains(files, folderSpec+"/stories/2-refund-an-invoice.md") || strings.Contains(files, workflows.StoriesFile) {
		t.Errorf("commits %v, subject %q, files:\n%s", commits, subject, files)
	}
	if dirty := rp.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Errorf("the worker left the tree dirty:\n%s", dirty)
	}
	if after, err := os.ReadFile(board); err != nil || string(after) != string(before) {
		t.Errorf("the worker changed the board (%v)", err)
	}
}
