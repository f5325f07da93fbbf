package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/internal/testing/realbmad"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/orchestrator/wire"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/workflows"
)

// retroProject is a real 6.12 project (newBMAD612Project) whose epic 1 is
// done on the board, committed: what is left of epic 1 is its retrospective.
func retroProject(t *testing.T) (*runProject, realbmad.Installed) {
	t.Helper()
	p, in := newBMAD612Project(t)
	proj, err := workflows.Open(p.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []workflows.StoryKey{{Epic: "1", Num: 1}, {Epic: "1", Num: 2}} {
		if err := proj.FinishStory(k, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "epic 1 done")
	return p, in
}

// runRetro runs epic 1 of the project in this process through the real
// adapters (wire.Build: tmux, the sim agent as a child of the built binary,
// git, the BMAD files) with uv on the PATH and env for the children. The
// build-auto pipeline's Ready is left out: it refuses to run stories until
// the build-auto pipeline runs them, and epic 1 has none left — its
// retrospective is BMAD 6.12's (Deps.Retro, set by wire for that pipeline).
func runRetro(t *testing.T, p *runProject, in realbmad.Installed, resume bool, env ...string) (*orchestrator.Result, error) {
	t.Helper()
	environ := cleanEnv(append([]string{"PROJECT_ROOT=" + p.root, "STORY_AUTOMATOR_TMUX_SOCKET=" + p.socket,
		"STORY_AUTOMATOR_SIM_LOG=" + p.simLog, withUV(in), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}, env...)...)
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	getenv := func(k string) string { return vars[k] }
	o := orchestrator.Options{ProjectRoot: p.root, Resume: resume}
	if !resume {
		o.RunConfig = orchestrator.RunConfig{Epic: "1", Stories: "all", Agent: "sim", Parallel: 1, TmuxSocket: p.socket}
	}
	o, d, err := wire.Build(context.Background(), o, wire.Process{Getenv: getenv, Environ: environ,
		Exe: func() (string, error) { return p.bin, nil }, Tmux: tmux.New(p.socket), SessionDir: sessionstate.Dir(p.root, getenv),
		Now: time.Now, Log: zerolog.Nop(), Version: buildinfo.Version(version)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Retro.(bmad.Retro); !ok {
		t.Fatalf("wire did not give the build-auto pipeline BMAD 6.12's retrospective: %T", d.Retro)
	}
	d.Pipeline, d.Report = nil, orchestrator.DiscardReporter{}
	return orchestrator.Run(context.Background(), o, d)
}

// validateBoard runs BMAD's own sprint_plan.py validate on the project's board.
func validateBoard(t *testing.T, p *runProject, in realbmad.Installed) {
	t.Helper()
	out := in.RunScript(t, p.root, ".claude/skills/bmad-sprint-planning/scripts/sprint_plan.py", "validate", "--status-file", p.sprintPath())
	var res struct{ Valid bool }
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Valid {
		board, _ := os.ReadFile(p.sprintPath())
		t.Fatalf("BMAD's validate rejects the board: %s\n%s", out, board)
	}
}

// The sim's child cannot set the board (as a confined child cannot run
// BMAD's script): the run sets epic-1-retrospective and adds the document's
// action items itself, BMAD's validate accepts the board, one commit named
// for the epic's retrospective holds the document and the board, and status
// lists the open action items.
func TestE2EBMAD612RetroSetsTheBoardItselfAndCommits(t *testing.T) {
	t.Parallel()
	p, in := retroProject(t)
	res, err := runRetro(t, p, in, false, "STORY_AUTOMATOR_SIM_RETRO=verdict=accepted-with-open-items")
	if err != nil || res.Outcome != orchestrator.OutcomeDone {
		t.Fatalf("run: %v %v", err, res)
	}
	board, _ := os.ReadFile(p.sprintPath())
	if !strings.Contains(string(board), "epic-1-retrospective: done") || !strings.Contains(string(board), `action: "Add error handling to the sign-up form"`) ||
		!strings.Contains(string(board), `owner: "dev"`) {
		t.Fatalf("board:\n%s", board)
	}
	validateBoard(t, p, in)
	if subject := strings.TrimSpace(p.git("log", "-1", "--format=%s")); subject != "epic 1: retrospective" {
		t.Fatalf("last commit %q", subject)
	}
	files := p.git("show", "--name-only", "--format=", "HEAD")
	if !strings.Contains(files, "_bmad-output/implementation-artifacts/epic-1-retro-") || !strings.Contains(files, "sprint-status.yaml") {
		t.Fatalf("the retrospective's commit holds:\n%s", files)
	}
	if dirty := strings.TrimSpace(p.git("status", "--porcelain")); dirty != "" {
		t.Fatalf("left uncommitted:\n%s", dirty)
	}
	st, code := p.run(nil, "status", "--json")
	units, _ := st["run"].(map[string]any)["units"].([]any)
	data, _ := json.Marshal(units)
	if code != 0 || !strings.Contains(string(data), `"verdict":"accepted-with-open-items"`) || !strings.Contains(string(data), "Document the settings API (owner: pm)") {
		t.Fatalf("status --json: exit %d %s", code, data)
	}
}

// A rejected epic, its board set by the child itself: the run commits the
// document and pauses with retro_rejected, quoting it; after the person's
// fix (the verdict changed) `run --resume` goes on and ends done.
// `retroGate: off` only reports.
func TestE2EBMAD612RejectedRetroPausesThenResumes(t *testing.T) {
	t.Parallel()
	p, in := retroProject(t)
	res, err := runRetro(t, p, in, false, "STORY_AUTOMATOR_SIM_RETRO=verdict=rejected,board")
	if err == nil || res == nil || res.State.Escalation == nil || res.State.Escalation.Code != orchestrator.CodeRetroRejected {
		t.Fatalf("run: %v %+v", err, res)
	}
	esc := res.State.Escalation
	if !strings.Contains(esc.Reason, "epic-1-retro-") || !strings.Contains(esc.Reason, "rejected: judged on the evidence alone") || !strings.Contains(esc.Action, "run --resume") {
		t.Fatalf("escalation %+v", esc)
	}
	validateBoard(t, p, in)
	if subject := strings.TrimSpace(p.git("log", "-1", "--format=%s")); subject != "epic 1: retrospective" {
		t.Fatalf("last commit %q", subject)
	}
	doc, err := workflows.FindSprintRetro(filepath.Join(p.root, "_bmad-output", "implementation-artifacts"), "1")
	if err != nil || doc == "" {
		t.Fatalf("document %q, %v", doc, err)
	}
	text, _ := os.ReadFile(doc)
	if err := os.WriteFile(doc, []byte(strings.Replace(string(text), "verdict: rejected", "verdict: accepted", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = runRetro(t, p, in, true, "STORY_AUTOMATOR_SIM_RETRO=verdict=rejected,board")
	if err != nil || res.Outcome != orchestrator.OutcomeDone {
		t.Fatalf("resume after the fix: %v %+v", err, res)
	}
	if u := res.State.Unit("epic-1-retro"); u.Retro == nil || u.Retro.Verdict != workflows.VerdictAccepted || len(u.Step(orchestrator.StepRetro).Attempts) != 1 {
		t.Fatalf("retro unit after resume %+v", u)
	}

	q, qin := retroProject(t)
	if err := os.MkdirAll(filepath.Join(q.root, ".story-automator"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(q.root, ".story-automator", "workflow.yaml"), []byte("retroGate: off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q.git("add", "-A")
	q.git("commit", "-q", "-m", "gate off")
	res, err = runRetro(t, q, qin, false, "STORY_AUTOMATOR_SIM_RETRO=verdict=rejected")
	if err != nil || res.Outcome != orchestrator.OutcomeDone {
		t.Fatalf("retroGate: off: %v %+v", err, res)
	}
	found := false
	for _, l := range res.State.Log {
		found = found || strings.Contains(l.Message, "retroGate: off, the run goes on")
	}
	if !found {
		t.Fatalf("the rejected epic was not reported: %+v", res.State.Log)
	}
	validateBoard(t, q, qin)
}
