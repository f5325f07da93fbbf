package bmad

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// ledgerOf writes deferred-work.md with the build skills' entries.
func ledgerOf(t *testing.T, root, text string) string {
	t.Helper()
	path := filepath.Join(root, artifactsDir, workflows.DeferredWorkFile)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const twoSpecsLedger = "# Deferred Work\n\n" +
	"- source_spec: `_bmad-output/implementation-artifacts/spec-1-1-sign-up.md`\n  summary: Retry test is flaky\n  evidence: fails 1 in 50\n  location: retry_test.go:10\n  severity: medium\n" +
	"- source_spec: `_bmad-output/implementation-artifacts/spec-1-2-settings.md`\n  summary: Settings page lacks a11y labels\n  evidence: axe reports 3\n  severity: high\n" +
	"- source_spec: `_bmad-output/implementation-artifacts/spec-1-1-sign-up.md`\n  summary: Error copy is terse\n  evidence: ux note\n  severity: high\n" +
	"- source_spec: `_bmad-output/implementation-artifacts/spec-1-1-sign-up.md`\n  summary: Typo in a log line\n  evidence: seen\n  severity: low\n"

func openIDs(t *testing.T, root string) []string {
	t.Helper()
	lay, err := workflows.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	w, err := workflows.ReadDeferredWork(lay)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range w.Open(0) {
		ids = append(ids, e.ID)
	}
	return ids
}

// A sweep lays out one unit per source spec, in the ledger's order, with
// the items at the severity asked; --only narrows it and refuses an id
// that is not open.
func TestLeftoversSweepOneUnitPerSourceSpec(t *testing.T) {
	root := sprintProject(t)
	ledgerOf(t, root, twoSpecsLedger)
	p := pipelineAt(root, &fakeGit{})
	got, err := p.Leftovers(context.Background(), orchestrator.Leftovers{Sweep: true, MinSeverity: "medium"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key != "sweep-1" || got[0].Kind != orchestrator.KindSweep || len(got[0].Work.Items) != 2 ||
		got[0].Work.Source != artifactsDir+"/spec-1-1-sign-up.md" || got[1].Work.Items[0].Summary != "Settings page lacks a11y labels" {
		t.Fatalf("units %+v", got)
	}
	ids := openIDs(t, root)
	got, err = p.Leftovers(context.Background(), orchestrator.Leftovers{Sweep: true, Only: []string{ids[3]}})
	if err != nil || len(got) != 1 || len(got[0].Work.Items) != 1 || got[0].Work.Items[0].Summary != "Typo in a log line" {
		t.Fatalf("--only: %+v, %v", got, err)
	}
	_, err = p.Leftovers(context.Background(), orchestrator.Leftovers{Sweep: true, MinSeverity: "high", Only: []string{ids[3]}})
	if b, ok := orchestrator.AsBlocker(err); !ok || b.Code != CodeNoSuchItem {
		t.Fatalf("--only of a low item at high: %v", err)
	}
}

// A ledger the run cannot read is refused naming its line, and never
// rewritten: at planning, at dispatch and at landing.
func TestLeftoversRefuseAnUnreadableLedger(t *testing.T) {
	root := sprintProject(t)
	bad := twoSpecsLedger + "- source_spec: `x.md`\n  evidence: no summary\n"
	path := ledgerOf(t, root, bad)
	p := pipelineAt(root, &fakeGit{head: "h"})
	_, err := p.Leftovers(context.Background(), orchestrator.Leftovers{Sweep: true})
	if b, ok := orchestrator.AsBlocker(err); !ok || b.Code != CodeDeferredWorkInvalid || !strings.Contains(err.Error(), "line 20") {
		t.Fatalf("planning: %v", err)
	}
	d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: "sweep-1", Dotted: "sweep 1"}, Step: orchestrator.StepDev,
		Agent: "sim", Kind: orchestrator.KindSweep, Work: &orchestrator.Work{Items: []orchestrator.WorkItem{{ID: "dw-00000000", Summary: "x"}}}}
	if _, err := p.Dispatch(context.Background(), d); !strings.Contains(err.Error(), "line 20") {
		t.Fatalf("dispatch: %v", err)
	}
	d.Base = "h"
	if err := p.Land(context.Background(), d, &orchestrator.CommitRequest{RunID: "r", Story: d.Story}); !strings.Contains(err.Error(), "line 20") {
		t.Fatalf("land: %v", err)
	}
	if now, _ := os.ReadFile(path); string(now) != bad {
		t.Fatalf("an unreadable ledger was rewritten:\n%s", now)
	}
}

// A sweep unit's dispatch sends free text naming its items (never a path)
// with each item's evidence, location and severity and the line that the
// board and the marks are the run's; an item closed by hand before the
// dispatch is left out, and a unit whose items are all closed skips. Its
// landing squashes, then marks the items still open done with the
// commit's id and commits the ledger alone; a hand's mark is kept.
func TestSweepUnitDispatchAndLanding(t *testing.T) {
	ctx := context.Background()
	root := sprintProject(t)
	path := ledgerOf(t, root, twoSpecsLedger)
	writeSpec(t, root, "spec-1-1-sign-up.md", "status: done\n", "")
	p := pipelineAt(root, &fakeGit{})
	units, err := p.Leftovers(ctx, orchestrator.Leftovers{Sweep: true})
	if err != nil {
		t.Fatal(err)
	}
	u := units[0]
	g := &fakeGit{head: "base1"}
	p = pipelineAt(root, g)
	d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: u.Key, Dotted: u.Dotted, Title: u.Title},
		Step: orchestrator.StepDev, Agent: "sim", Kind: u.Kind, Work: &u.Work}
	// A person closes the third item (low) before the dispatch.
	closed := strings.Replace(twoSpecsLedger, "  severity: low\n", "  severity: low\n  done: won't fix\n", 1)
	ledgerOf(t, root, closed)
	got, err := p.Dispatch(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(got.Prompt, "\n")
	if !strings.HasPrefix(first, "/bmad-build-auto Fix deferred review findings "+u.Work.Items[0].ID+", "+u.Work.Items[1].ID+" ") ||
		strings.Contains(first, ".md") || strings.Contains(first, u.Work.Items[2].ID) {
		t.Fatalf("first line %q", first)
	}
	for _, want := range []string{"spec-1-1-sign-up.md", "Retry test is flaky", "evidence: fails 1 in 50", "location: retry_test.go:10",
		"severity: medium", "Error copy is terse", WorkLine} {
		if !strings.Contains(got.Prompt, want) {
			t.Fatalf("prompt lacks %q:\n%s", want, got.Prompt)
		}
	}
	if len(got.Skipped) != 1 || got.Skipped[0] != u.Work.Items[2].ID || got.Base != "base1" || len(got.Before) != 1 || len(g.commits) != 0 {
		t.Fatalf("dispatched %+v, commits %v", got, g.commits)
	}
	// A person closes the first item after the dispatch: the landing keeps their mark.
	ledgerOf(t, root, strings.Replace(closed, "  severity: medium\n", "  severity: medium\n  done: fixed by hand\n", 1))
	d.Base, d.Spec = "base1", artifactsDir+"/spec-1-1-sign-up.md"
	g.dirty = []string{artifactsDir + "/" + workflows.DeferredWorkFile}
	if err := p.Land(ctx, d, &orchestrator.CommitRequest{RunID: "r", Story: d.Story}); err != nil {
		t.Fatal(err)
	}
	ledger, _ := os.ReadFile(path)
	if g.squashed == nil || !strings.HasPrefix(g.squashed.Subject, "sweep: deferred findings of spec-1-1-sign-up.md") ||
		strings.Count(string(ledger), "done: sha\n") != 1 || !strings.Contains(string(ledger), "Error copy is terse\n  evidence: ux note\n  severity: high\n  done: sha\n") ||
		!strings.Contains(string(ledger), "done: fixed by hand") || !strings.Contains(string(ledger), "done: won't fix") {
		t.Fatalf("squashed %+v\nledger:\n%s", g.squashed, ledger)
	}
	if len(g.commits) != 1 || !strings.Contains(g.commits[0], "deferred items done in sha") || !strings.HasSuffix(g.commits[0], " "+artifactsDir+"/"+workflows.DeferredWorkFile) {
		t.Fatalf("commits %v", g.commits)
	}
	// Every item closed: the next unit's dispatch skips, and sends nothing.
	ledgerOf(t, root, strings.ReplaceAll(twoSpecsLedger, "\n- ", "\n  done: x\n- ")+"  done: x\n")
	got, err = p.Dispatch(ctx, orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: "sweep-2"}, Step: orchestrator.StepDev,
		Agent: "sim", Kind: orchestrator.KindSweep, Work: &units[1].Work})
	if err != nil || got.Skip == "" || got.Prompt != "" || len(got.Skipped) != 1 {
		t.Fatalf("all closed: %+v, %v", got, err)
	}
}

// A landing the run was killed in comes back without a second commit: the
// unit's commit is found by its trailers, and the marks name it.
func TestSweepLandingAfterAKillFindsItsCommit(t *testing.T) {
	root := sprintProject(t)
	path := ledgerOf(t, root, twoSpecsLedger)
	units, err := pipelineAt(root, &fakeGit{}).Leftovers(context.Background(), orchestrator.Leftovers{Sweep: true})
	if err != nil {
		t.Fatal(err)
	}
	g := &fakeGit{found: "c0ffee", dirty: []string{artifactsDir + "/" + workflows.DeferredWorkFile}}
	d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: "sweep-2"}, Kind: orchestrator.KindSweep,
		Work: &units[1].Work, Base: "b"}
	if err := pipelineAt(root, g).Land(context.Background(), d, &orchestrator.CommitRequest{RunID: "r", Story: d.Story}); err != nil {
		t.Fatal(err)
	}
	ledger, _ := os.ReadFile(path)
	if g.squashed != nil || !strings.Contains(string(ledger), "a11y labels\n  evidence: axe reports 3\n  severity: high\n  done: c0ffee\n") {
		t.Fatalf("squashed again: %+v\n%s", g.squashed, ledger)
	}
}

// An action unit moves its item open → in-progress at dispatch (the
// board committed, the worker starts clean) and done as it lands, in the
// unit's commit; an item done by hand skips.
func TestActionUnitMovesItsItemOnTheBoard(t *testing.T) {
	ctx := context.Background()
	root := sprintProject(t)
	board := filepath.Join(root, artifactsDir, "sprint-status.yaml")
	data, _ := os.ReadFile(board)
	items := "action_items:\n  - id: \"epic-1-retro-item-1-add-ci\"\n    epic: 1\n    action: \"Add CI\"\n    owner: \"dev\"\n    status: open\n    ref: \"r.md\"\n" +
		"  - id: \"epic-1-retro-item-2-docs\"\n    epic: 1\n    action: \"Docs\"\n    owner: \"pm\"\n    status: done\n    ref: \"r.md\"\n"
	if err := os.WriteFile(board, append(data, items...), 0o644); err != nil {
		t.Fatal(err)
	}
	units, err := pipelineAt(root, &fakeGit{}).Leftovers(ctx, orchestrator.Leftovers{ActionItems: true})
	if err != nil || len(units) != 1 || units[0].Key != "epic-1-retro-item-1-add-ci" || units[0].Kind != orchestrator.KindAction || units[0].Epic != "1" {
		t.Fatalf("units %+v, %v", units, err)
	}
	u := units[0]
	g := &fakeGit{head: "b"}
	p := pipelineAt(root, g)
	d := orchestrator.StoryDispatch{RunID: "r", Story: orchestrator.StoryInfo{Key: u.Key, Dotted: u.Dotted, Epic: u.Epic, Title: u.Title},
		Step: orchestrator.StepDev, Agent: "sim", Kind: u.Kind, Work: &u.Work}
	got, err := p.Dispatch(ctx, d)
	if err != nil || !strings.HasPrefix(got.Prompt, "/bmad-build-auto Carry out retrospective action item epic-1-retro-item-1-add-ci: Add CI\n") {
		t.Fatalf("dispatched %+v, %v", got, err)
	}
	now, _ := os.ReadFile(board)
	if !strings.Contains(string(now), "status: in-progress\n    ref: \"r.md\"\n  - id: \"epic-1-retro-item-2") || len(g.commits) != 1 ||
		!strings.Contains(g.commits[0], "action item epic-1-retro-item-1-add-ci in-progress") {
		t.Fatalf("board:\n%s\ncommits %v", now, g.commits)
	}
	d.Base = "b"
	if err := p.Land(ctx, d, &orchestrator.CommitRequest{RunID: "r", Story: d.Story}); err != nil {
		t.Fatal(err)
	}
	lay, _ := workflows.Open(root)
	after, _ := lay.ReadActionItems()
	if after[0].Status != workflows.ActionDone || g.squashed == nil || g.squashed.Subject != "action item epic-1-retro-item-1-add-ci: Add CI" ||
		len(g.paths) != 1 || g.paths[0] != artifactsDir+"/sprint-status.yaml" {
		t.Fatalf("items %+v, squashed %+v paths %v", after, g.squashed, g.paths)
	}
	d.Base = ""
	if got, err := p.Dispatch(ctx, d); err != nil || got.Skip == "" {
		t.Fatalf("a done item: %+v, %v", got, err)
	}
}
