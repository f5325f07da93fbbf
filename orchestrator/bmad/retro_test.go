package bmad

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

const retroText = "---\nepic: 1\ndate: 12-01-2026\nverdict: %s\ncriteria: profiled\nheadless: true\n---\n\n# Retrospective\n\n## Action items\n\n- Add error handling (owner: dev)\n- Write the settings docs\n\n## Acceptance verdict\n\nThe epic meets its criteria.\n"

func writeRetro(t *testing.T, path, verdict string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(retroText, "%s", verdict, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The retrospective is dispatched headless in the agent's own skill form;
// an agent without one is refused with what to do.
func TestRetroPromptIsTheSkillForm(t *testing.T) {
	r := Retro{Files: Files{P: sampleProject(t)}}
	if got, err := r.Prompt(agent.AgentSim, "1"); err != nil || got != "/bmad-retrospective -H 1" {
		t.Fatalf("%q, %v", got, err)
	}
	if got, err := r.Prompt(agent.AgentSim, "_bmad-output/specs/spec-billing"); err != nil || got != "/bmad-retrospective -H _bmad-output/specs/spec-billing" {
		t.Fatalf("%q, %v", got, err)
	}
	_, err := r.Prompt(agent.AgentCustom, "1")
	if b, ok := orchestrator.AsBlocker(err); !ok || b.Code != "retro_unsupported" || !strings.Contains(b.Action, "steps.retro.agent") {
		t.Fatalf("err = %v", err)
	}
}

// Sprint mode: the newest document's verdict and action items; a board the
// child left without the retrospective is set right (retrospective done,
// the items appended) and the commit takes the document and the board; a
// board already right is left alone.
func TestRetroSettleSprintMode(t *testing.T) {
	p := sampleProject(t)
	r := Retro{Files: Files{P: p}, Now: func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }}
	if _, err := r.Settle("1", "1"); !errors.Is(err, workflows.ErrRetroInvalid) || workflows.Code(err) != "retro_invalid" {
		t.Fatalf("no document: %v", err)
	}
	doc := filepath.Join(p.ArtifactsDir, "epic-1-retro-2026-12-01.md")
	writeRetro(t, doc, workflows.VerdictAcceptedOpenItems)
	v, err := r.Settle("1", "1")
	rel := filepath.ToSlash(p.Rel(doc))
	if err != nil || v.Verdict != workflows.VerdictAcceptedOpenItems || v.Document != rel || len(v.ActionItems) != 2 ||
		v.Summary != "The epic meets its criteria." || !strings.Contains(v.Board, "epic-1-retrospective: done and added 2 action items") ||
		!slices.Equal(v.Paths, []string{rel, Files{P: p}.StatusFile()}) {
		t.Fatalf("%+v, %v", v, err)
	}
	board, _ := os.ReadFile(p.SprintStatusPath())
	if done, _ := (Files{P: p}).RetroDone("1"); !done || !strings.Contains(string(board), `action: "Add error handling"`) || !strings.Contains(string(board), `owner: "dev"`) {
		t.Fatalf("board:\n%s", board)
	}
	// The retrospective's commit carries its action items, whatever the committed board had.
	committed := []byte(strings.Split(string(board), "action_items:")[0])
	got, err := (Files{P: p}).StatusForCommit(committed, "epic-1-retro", "1", true)
	if err != nil || !strings.Contains(string(got), "epic-1-retro-item-1-add-error-handling") || !strings.Contains(string(got), "epic-1-retrospective: done") {
		t.Fatalf("commit content %v:\n%s", err, got)
	}
	again, err := r.Settle("1", "1")
	if err != nil || again.Board != "" {
		t.Fatalf("second settle %+v, %v", again, err)
	}
	if now, _ := os.ReadFile(p.SprintStatusPath()); string(now) != string(board) {
		t.Fatalf("a board already right was rewritten:\n%s", now)
	}
}

// Stories mode: the folder's RETROSPECTIVE.md, and nothing else touched.
func TestRetroSettleStoriesMode(t *testing.T) {
	p := sampleProject(t)
	r := Retro{Files: Files{P: p}}
	folder := "_bmad-output/specs/spec-billing"
	writeRetro(t, filepath.Join(p.Root, folder, workflows.RetroFile), workflows.VerdictRejected)
	before, _ := os.ReadFile(p.SprintStatusPath())
	v, err := r.Settle("1", folder)
	if err != nil || v.Verdict != workflows.VerdictRejected || v.Document != folder+"/"+workflows.RetroFile || v.Board != "" ||
		!slices.Equal(v.Paths, []string{folder + "/" + workflows.RetroFile}) {
		t.Fatalf("%+v, %v", v, err)
	}
	if now, _ := os.ReadFile(p.SprintStatusPath()); string(now) != string(before) {
		t.Fatalf("stories mode touched the board")
	}
}
