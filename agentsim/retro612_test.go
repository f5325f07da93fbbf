package agentsim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
	"github.com/story-automator/story-automator/workflows"
)

// retroProject is a real 6.12 project whose board BMAD's own sprint_plan.py
// generated: epic 1 (two stories, done unless open says otherwise).
func retroProject(t *testing.T, open bool) (realbmad.Installed, *workflows.Layout) {
	t.Helper()
	dir := workerProject(t)
	in := realbmad.Require(t)
	epics := filepath.Join(dir, "_bmad-output", "planning-artifacts", "epics.md")
	if err := writeProjectFile(epics, "# Epics\n\n## Epic 1: Accounts\n\n### Story 1.1: Sign up\n\nA visitor signs up.\n\n### Story 1.2: Settings\n\nA user changes settings.\n"); err != nil {
		t.Fatal(err)
	}
	in.RunScript(t, dir, ".claude/skills/bmad-sprint-planning/scripts/sprint_plan.py", "generate",
		"--epic-file", "_bmad-output/planning-artifacts/epics.md",
		"--status-file", "_bmad-output/implementation-artifacts/sprint-status.yaml",
		"--stories-dir", "_bmad-output/implementation-artifacts", "--project", "demo", "--date", "2026-11-28")
	p, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, k := range []workflows.StoryKey{{Epic: "1", Num: 1}, {Epic: "1", Num: 2}} {
		if open && k.Num == 2 {
			continue
		}
		if err := p.FinishStory(k, at); err != nil {
			t.Fatal(err)
		}
	}
	return in, p
}

// holdSim runs the default (bmad) behaviour with prompt, as a child would.
func holdSim(t *testing.T, dir, prompt, steer string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	env := map[string]string{"PROJECT_ROOT": dir, EnvRetro: steer}
	code := Run(context.Background(), &Sim{Prompt: prompt, Options: Options{Behaviour: BehaviourBMAD}, Out: &out,
		Getenv: func(k string) string { return env[k] }, Now: func() time.Time { return time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC) }})
	return code, out.String()
}

func retroStatus(t *testing.T, p *workflows.Layout) string {
	t.Helper()
	s, err := p.ReadSprintStatus()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Entries() {
		if e.Key == "epic-1-retrospective" {
			return e.Status
		}
	}
	return ""
}

// The headless retrospective writes its document with each verdict as
// steered, with its action items; it leaves the board as a confined child
// does, or, told to, sets it as BMAD's script does (BMAD's validate
// accepts it).
func TestSimRetrospectiveEachVerdictWithAndWithoutTheBoard(t *testing.T) {
	for _, v := range []string{workflows.VerdictAccepted, workflows.VerdictAcceptedOpenItems, workflows.VerdictRejected} {
		t.Run(v, func(t *testing.T) {
			in, p := retroProject(t, false)
			code, out := holdSim(t, p.Root, "/bmad-retrospective -H 1", "verdict="+v)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, out)
			}
			doc, err := workflows.FindSprintRetro(p.ArtifactsDir, "1")
			if err != nil || filepath.Base(doc) != "epic-1-retro-2026-12-02.md" {
				t.Fatalf("document %q, %v", doc, err)
			}
			r, err := workflows.ReadRetro(doc)
			if err != nil || r.Verdict != v || (len(r.ActionItems) > 0) != (v != workflows.VerdictAccepted) {
				t.Fatalf("%+v, %v", r, err)
			}
			if got := retroStatus(t, p); got != workflows.StatusOptional {
				t.Fatalf("without board the retrospective entry is %q", got)
			}
			if err := os.Remove(doc); err != nil {
				t.Fatal(err)
			}
			if code, out := holdSim(t, p.Root, "/bmad-retrospective -H 1", "verdict="+v+",board"); code != 0 || !strings.Contains(out, "set the board") {
				t.Fatalf("exit %d: %s", code, out)
			}
			if got := retroStatus(t, p); got != workflows.StatusDone {
				t.Fatalf("with board the retrospective entry is %q", got)
			}
			res := in.RunScript(t, p.Root, ".claude/skills/bmad-sprint-planning/scripts/sprint_plan.py", "validate", "--status-file", p.SprintStatusPath())
			var val struct{ Valid bool }
			if json.Unmarshal([]byte(res), &val) != nil || !val.Valid {
				t.Fatalf("BMAD's validate: %s", res)
			}
		})
	}
}

// An epic with a story not done is rejected whatever the steer says, as
// BMAD's is; stories mode writes the folder's RETROSPECTIVE.md and touches
// nothing else.
func TestSimRetrospectiveUnfinishedEpicAndStoriesMode(t *testing.T) {
	_, p := retroProject(t, true)
	if code, out := holdSim(t, p.Root, "/bmad-retrospective -H 1", "verdict=accepted,board"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	doc, _ := workflows.FindSprintRetro(p.ArtifactsDir, "1")
	if r, err := workflows.ReadRetro(doc); err != nil || r.Verdict != workflows.VerdictRejected {
		t.Fatalf("%+v, %v", r, err)
	}
	board, _ := os.ReadFile(p.SprintStatusPath())
	folder := "_bmad-output/specs/spec-billing"
	if code, out := holdSim(t, p.Root, "/bmad-retrospective -H "+folder, "verdict=accepted-with-open-items,board"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	r, err := workflows.ReadRetro(filepath.Join(p.Root, folder, workflows.RetroFile))
	if err != nil || r.Verdict != workflows.VerdictAcceptedOpenItems {
		t.Fatalf("%+v, %v", r, err)
	}
	if now, _ := os.ReadFile(p.SprintStatusPath()); !bytes.Equal(now, board) {
		t.Fatal("stories mode touched the board")
	}
	if code, out := holdSim(t, p.Root, "/bmad-retrospective please", ""); code == 0 {
		t.Fatalf("a prompt without -H was taken: %s", out)
	}
}

// In stories mode the retrospective reads each story of the folder's
// stories.yaml by its spec: one not done forces rejected whatever the
// steer says; with all done the steered verdict stands. It writes the
// folder's RETROSPECTIVE.md and nothing else.
func TestSimRetrospectiveStoriesModeReadsTheFolder(t *testing.T) {
	dir, folder := specFolderProject(t)
	stories := filepath.Join(folder, "stories")
	for _, f := range []string{"1-issue-invoices.md", "2-refund-an-invoice.md"} {
		if err := writeProjectFile(filepath.Join(stories, f), "---\nstatus: done\n---\n\n# Done\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeProjectFile(filepath.Join(stories, "3-export-the-ledger.md"), "---\nstatus: in-review\n---\n\n# Export\n"); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-q", "-m", "the stories so far")
	if code, out := holdSim(t, dir, "/bmad-retrospective -H "+billingFolder, "verdict=accepted,board"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	doc := filepath.Join(folder, workflows.RetroFile)
	r, err := workflows.ReadRetro(doc)
	if err != nil || r.Verdict != workflows.VerdictRejected {
		t.Fatalf("with story 3 in review: %+v, %v", r, err)
	}
	text, _ := os.ReadFile(doc)
	if !strings.Contains(string(text), "- Story 3 (Export the ledger): in-review\n") || !strings.Contains(string(text), "- Story 1 (Issue invoices): done\n") {
		t.Fatalf("the summary does not list the stories:\n%s", text)
	}
	if dirty := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); dirty != "?? "+billingFolder+"/"+workflows.RetroFile {
		t.Fatalf("the retrospective touched:\n%s", dirty)
	}
	if err := writeProjectFile(filepath.Join(stories, "3-export-the-ledger.md"), "---\nstatus: done\n---\n\n# Export\n"); err != nil {
		t.Fatal(err)
	}
	if code, out := holdSim(t, dir, "/bmad-retrospective -H "+folder, "verdict=accepted-with-open-items"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if r, err = workflows.ReadRetro(doc); err != nil || r.Verdict != workflows.VerdictAcceptedOpenItems || len(r.ActionItems) == 0 {
		t.Fatalf("with every story done: %+v, %v", r, err)
	}
}
