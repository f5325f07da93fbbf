package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// doneSpec writes a done spec whose review deferred findings (YAML items
// of the spec's frontmatter `deferred:`).
func (p *runProject) doneSpec(name, deferred string) {
	p.t.Helper()
	text := "---\ntitle: 'x'\nstatus: 'done'\ndeferred:\n" + deferred + "---\n\n## Auto Run Result\n\nStatus: done\n"
	if err := os.WriteFile(filepath.Join(p.root, "_bmad-output", "implementation-artifacts", name), []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *runProject) ledger() workflows.DeferredWork {
	p.t.Helper()
	lay, err := workflows.Open(p.root)
	if err != nil {
		p.t.Fatal(err)
	}
	w, err := workflows.ReadDeferredWork(lay)
	if err != nil {
		p.t.Fatal(err)
	}
	return w
}

// Deferred findings of two specs, collected into deferred-work.md once
// each, are swept to done by the sim worker on a real 6.12 project: one
// unit per source spec, dispatched as free text, each landed as one
// commit, its items marked done with that commit's id (the marks
// committed), an item a person closed left as they closed it, the board
// untouched; the dry run and status show the units and their items.
func TestE2ESweepTakesDeferredItemsToDone(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	p.doneSpec("spec-0-1-old-sign-up.md", "  - summary: Password rule allows spaces\n    evidence: no check\n    location: src/signup.go:40\n    severity: high\n"+
		"  - summary: Log line is noisy\n    evidence: seen in tests\n    severity: low\n"+
		"  - summary: Error copy is terse\n    evidence: ux note\n    severity: medium\n")
	p.doneSpec("spec-0-2-old-sign-in.md", "  - summary: Lockout counter never resets\n    evidence: no reset path\n    location: src/lockout.go:12\n    severity: medium\n")
	for i := 0; i < 2; i++ {
		res, code := p.run(nil, "deferred", "--json")
		collected, _ := res["collected"].(map[string]any)
		if added, _ := collected["added"].([]any); code != 0 || len(added) != 4-4*i {
			t.Fatalf("deferred, call %d: exit %d %v", i+1, code, res)
		}
	}
	// A person closes one finding by hand before the sweep.
	ledgerPath := filepath.Join(p.root, "_bmad-output", "implementation-artifacts", workflows.DeferredWorkFile)
	text := readFile(t, ledgerPath)
	if err := os.WriteFile(ledgerPath, []byte(strings.Replace(text, "  severity: low\n", "  severity: low\n  done: won't fix (by hand)\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "specs and their deferred findings")
	boardBefore := p.board()

	out, err := p.cmd([]string{withUV(in)}, "run", "--sweep", "--agent", "sim", "--dry-run").Output()
	if err != nil || !strings.Contains(string(out), "2 units of leftovers to do") || !strings.Contains(string(out), "deferred findings of _bmad-output/implementation-artifacts/spec-0-2-old-sign-in.md:") ||
		!strings.Contains(string(out), "[medium] Lockout counter never resets") || strings.Contains(string(out), "Log line is noisy") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	res, code := p.run([]string{withUV(in)}, "run", "--sweep", "--agent", "sim", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run --sweep: exit %d %v\n%s", code, res, p.stateLog())
	}
	st := p.state()
	if len(st.Units) != 2 {
		t.Fatalf("units %+v", st.Units)
	}
	commits := p.storyCommits()
	marks := map[string]string{}
	for _, u := range st.Units {
		if u.Kind != orchestrator.KindSweep || u.Status != orchestrator.StatusDone || u.Commit == "" || commits[u.Key] != 1 {
			t.Fatalf("unit %s: %+v (commits %v)", u.Key, u, commits)
		}
		for _, it := range u.Work.Items {
			marks[it.ID] = u.Commit
		}
		subject := strings.TrimSpace(p.git("log", "-1", "--format=%s", u.Commit))
		files := p.git("show", "--name-only", "--format=", u.Commit)
		if subject != "sweep: deferred findings of "+filepath.Base(u.Work.Source) || !strings.Contains(files, agentsim.SimWorkDir+"/") ||
			strings.Contains(files, "sprint-status.yaml") {
			t.Fatalf("unit %s's commit %q holds:\n%s", u.Key, subject, files)
		}
	}
	if len(st.Units[0].Work.Items) != 2 || len(st.Units[1].Work.Items) != 1 {
		t.Fatalf("items per unit: %+v / %+v", st.Units[0].Work, st.Units[1].Work)
	}
	w := p.ledger()
	if len(w.Items) != 4 || len(w.Open(0)) != 0 {
		t.Fatalf("ledger items %+v", w.Items)
	}
	for _, e := range w.Items {
		want, swept := marks[e.ID]
		if !swept {
			want = "won't fix (by hand)"
		}
		if e.Done != want {
			t.Errorf("item %q is marked %q, want %q", e.Summary, e.Done, want)
		}
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Fatalf("the sweep left the tree dirty:\n%s", dirty)
	}
	if p.board() != boardBefore {
		t.Fatalf("the sweep changed the board:\n%s", p.board())
	}
	res, code = p.run(nil, "deferred", "--json")
	if added, _ := res["collected"].(map[string]any)["added"].([]any); code != 0 || len(added) != 0 || len(openSummaries(t, res)) != 0 {
		t.Fatalf("deferred after the sweep: exit %d %v", code, res)
	}
	status, serr := p.cmd(nil, "status", "--json").CombinedOutput()
	if !strings.Contains(string(status), `"kind":"sweep"`) || !strings.Contains(string(status), `"source":"_bmad-output/implementation-artifacts/spec-0-1-old-sign-up.md"`) {
		t.Fatalf("status: %v\n%s", serr, status)
	}
}

// A ledger the run cannot read refuses the sweep naming its line, and is
// left as it was.
func TestE2ESweepRefusesAnUnreadableLedger(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	ledgerPath := filepath.Join(p.root, "_bmad-output", "implementation-artifacts", workflows.DeferredWorkFile)
	bad := "# Deferred Work\n\n- source_spec: `x.md`\n  evidence: no summary here\n"
	if err := os.WriteFile(ledgerPath, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "a broken ledger")
	res, code := p.run([]string{withUV(in)}, "run", "--sweep", "--agent", "sim", "--json")
	if code == 0 || res["error"] != "deferred_work_invalid" || !strings.Contains(res["message"].(string), "line 3") {
		t.Fatalf("run --sweep: exit %d %v", code, res)
	}
	if readFile(t, ledgerPath) != bad {
		t.Fatal("the run rewrote a ledger it cannot read")
	}
}

// The retrospective's open action items run as work: each dispatched as
// free text, moved open → in-progress → done on the board by the run,
// landed as one commit; an item already done is left alone; BMAD's own
// validate accepts the board; status shows the unit.
func TestE2EActionItemsRunAsWork(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	script := ".claude/skills/bmad-retrospective/scripts/sprint_status.py"
	in.RunScript(t, p.root, script, "update", "--file", p.sprintPath(), "--epic", "1",
		"--add-action", `[{"action":"Add error handling to the sign-up form","owner":"dev"},{"action":"Document the settings API","owner":"pm"}]`,
		"--ref", "_bmad-output/implementation-artifacts/epic-1-retro-2026-12-03.md", "--date", "12-03-2026 14:05")
	doneID := "epic-1-retro-item-2-document-the-settings-api"
	in.RunScript(t, p.root, script, "update", "--file", p.sprintPath(), "--epic", "1",
		"--set-action-status", `[{"id":"`+doneID+`","status":"done"}]`, "--date", "12-03-2026 15:00")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "retrospective action items")

	res, code := p.run([]string{withUV(in)}, "run", "--action-items", "--agent", "sim", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run --action-items: exit %d %v\n%s", code, res, p.stateLog())
	}
	st := p.state()
	id := "epic-1-retro-item-1-add-error-handling-to-the-sign-up-form"
	if len(st.Units) != 1 || st.Units[0].Key != id || st.Units[0].Kind != orchestrator.KindAction || st.Units[0].Commit == "" {
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
		!strings.Contains(files, "sprint-status.yaml") || !strings.Contains(files, agentsim.SimWorkDir+"/") {
		t.Fatalf("commit %q holds:\n%s", subject, files)
	}
	// The in-progress move was committed before the dispatch, then squashed into the item's commit.
	if parent := strings.TrimSpace(p.git("log", "-1", "--format=%s", sha+"^")); parent != "retrospective action items" {
		t.Fatalf("the item's commit follows %q", parent)
	}
	if s := boardStatus(p.board(), buildAutoKeys["1-1"]); s != "backlog" {
		t.Fatalf("a story moved on the board: %s", s)
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Fatalf("tree dirty:\n%s", dirty)
	}
	t.Logf("sprint_plan.py validate: %s", strings.TrimSpace(p.validateBoard(in)))
	status, serr := p.cmd(nil, "status", "--json").CombinedOutput()
	if !strings.Contains(string(status), `"kind":"action"`) || !strings.Contains(string(status), `"source":"_bmad-output/implementation-artifacts/epic-1-retro-2026-12-03.md"`) {
		t.Fatalf("status: %v\n%s", serr, status)
	}
}

// Items a person closes while a sweep is paused (a plan checkpoint after
// the first unit's planning) are skipped: the first unit's landing marks
// only its item still open, and the second unit, whose one item was
// closed, dispatches nothing and makes no commit.
func TestE2ESweepSkipsItemsClosedMeanwhile(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	p.doneSpec("spec-0-1-old-sign-up.md", "  - summary: Password rule allows spaces\n    evidence: no check\n    severity: high\n"+
		"  - summary: Error copy is terse\n    evidence: ux note\n    severity: medium\n")
	p.doneSpec("spec-0-2-old-sign-in.md", "  - summary: Lockout counter never resets\n    evidence: no reset path\n    severity: medium\n")
	if _, code := p.run(nil, "deferred", "--json"); code != 0 {
		t.Fatal("deferred failed")
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "specs and their deferred findings")

	res, code := p.run([]string{withUV(in)}, "run", "--sweep", "--plan-checkpoint", "--agent", "sim", "--json")
	if code == 0 || res["error"] != "plan_review" {
		t.Fatalf("run --sweep --plan-checkpoint: exit %d %v\n%s", code, res, p.stateLog())
	}
	ledgerPath := filepath.Join(p.root, "_bmad-output", "implementation-artifacts", workflows.DeferredWorkFile)
	text := readFile(t, ledgerPath)
	text = strings.Replace(text, "  evidence: ux note\n", "  evidence: ux note\n  done: by hand\n", 1)
	text = strings.Replace(text, "  evidence: no reset path\n", "  evidence: no reset path\n  done: by hand\n", 1)
	if err := os.WriteFile(ledgerPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("commit", "-q", "-am", "closed two findings by hand")

	res, code = p.run([]string{withUV(in)}, "run", "--resume", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume: exit %d %v\n%s", code, res, p.stateLog())
	}
	st := p.state()
	u1, u2 := st.Unit("sweep-1"), st.Unit("sweep-2")
	if u1 == nil || u2 == nil || u1.Commit == "" || u2.Commit != "" || u2.Step(orchestrator.StepCommit).Status != orchestrator.StatusSkipped ||
		len(u1.Work.Skipped) != 1 || len(u2.Work.Skipped) != 1 {
		t.Fatalf("units %+v\n%+v", u1, u2)
	}
	if commits := p.storyCommits(); commits["sweep-1"] != 1 || commits["sweep-2"] != 0 {
		t.Fatalf("commits %v", commits)
	}
	for _, e := range p.ledger().Items {
		want := "by hand"
		if e.Summary == "Password rule allows spaces" {
			want = u1.Commit
		}
		if e.Done != want {
			t.Errorf("item %q is marked %q, want %q", e.Summary, e.Done, want)
		}
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Fatalf("tree dirty:\n%s", dirty)
	}
}
