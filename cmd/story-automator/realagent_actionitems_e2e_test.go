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

// The real Claude Code runs the real bmad-build-auto skill against
// model-sim on the open action item of a retrospective (added to the board
// by BMAD's own sprint_status.py, as the retrospective does; a second one
// already done): `run --action-items` dispatches it as free text, the
// worker writes a fresh spec and the work through the skill, the run
// moves the item open → in-progress → done on the board and lands it as
// one commit; BMAD's validate accepts the board, no story moved.
func TestRealClaudeActionItemsRunAsWork(t *testing.T) {
	t.Parallel()
	cli := realagent.Require(t, "claude")
	p, in := buildAutoProject(t, "")
	script := ".claude/skills/bmad-retrospective/scripts/sprint_status.py"
	in.RunScript(t, p.root, script, "update", "--file", p.sprintPath(), "--epic", "1",
		"--add-action", `[{"action":"Add error handling to the sign-up form","owner":"dev"},{"action":"Document the settings API","owner":"pm"}]`,
		"--ref", "_bmad-output/implementation-artifacts/epic-1-retro-2026-12-03.md", "--date", "12-03-2026 14:05")
	in.RunScript(t, p.root, script, "update", "--file", p.sprintPath(), "--epic", "1",
		"--set-action-status", `[{"id":"epic-1-retro-item-2-document-the-settings-api","status":"done"}]`, "--date", "12-03-2026 15:00")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "retrospective action items")
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

	start := time.Now()
	res, code := p.run(env, "run", "--action-items", "--agent", "claude", "--json", "--completion-rechecks", "1")
	t.Logf("measured: run --action-items (1 item) took %s wall", time.Since(start).Round(time.Millisecond))
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run --action-items: exit %d %v\n%s", code, res, p.stateLog())
	}
	id := "epic-1-retro-item-1-add-error-handling-to-the-sign-up-form"
	if !promptedWith(srv.Exchanges(), "Carry out retrospective action item "+id+": Add error handling to the sign-up form") {
		t.Errorf("the item's free-text dispatch did not reach the model:\n%s", exchangeSummary(srv.Exchanges()))
	}
	checkReviewSubagent(t, "claude", srv.Exchanges(), filepath.Join(root, "_bmad-output", "implementation-artifacts", "spec-action-epic-1-retro-item-1.md"))
	st := p.state()
	if len(st.Units) != 1 || st.Units[0].Key != id || st.Units[0].Kind != orchestrator.KindAction || st.Units[0].Commit == "" ||
		st.Units[0].Spec != "_bmad-output/implementation-artifacts/spec-action-epic-1-retro-item-1.md" {
		t.Fatalf("units %+v", st.Units)
	}
	lay, err := workflows.Open(p.root)
	if err != nil {
		t.Fatal(err)
	}
	items, err := lay.ReadActionItems()
	if err != nil || len(items) != 2 || items[0].Status != workflows.ActionDone || items[1].Status != workflows.ActionDone {
		t.Fatalf("items %+v, %v", items, err)
	}
	if n := p.storyCommits()[id]; n != 1 {
		t.Fatalf("%d commits for the item", n)
	}
	sha := st.Units[0].Commit
	files := p.git("show", "--name-only", "--format=", sha)
	if subject := strings.TrimSpace(p.git("log", "-1", "--format=%s", sha)); subject != "action item "+id+": Add error handling to the sign-up form" ||
		!strings.Contains(files, "sprint-status.yaml") || !strings.Contains(files, "src/greeting.py") || !strings.Contains(files, "spec-action-epic-1-retro-item-1.md") {
		t.Fatalf("commit %q holds:\n%s", subject, files)
	}
	if parent := strings.TrimSpace(p.git("log", "-1", "--format=%s", sha+"^")); parent != "retrospective action items" {
		t.Fatalf("the item's commit follows %q", parent)
	}
	if s := boardStatus(p.board(), buildAutoKeys["1-1"]); s != "backlog" {
		t.Fatalf("a story moved on the board: %s", s)
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Fatalf("tree dirty:\n%s", dirty)
	}
	if out := p.validateBoard(in); !strings.Contains(out, `"valid": true`) {
		t.Errorf("BMAD's sprint_plan.py validate refused the board: %s", out)
	}
	if dev := st.Units[0].Step(orchestrator.StepDev); dev != nil && len(dev.Attempts) > 0 {
		t.Logf("measured: the item's worker: %dms wall, %dms in the agent", dev.Attempts[0].WallMs, dev.Attempts[0].AgentMs)
	}
}
