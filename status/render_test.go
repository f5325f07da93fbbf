package status

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

func TestStatusWatchRedrawsInPlace(t *testing.T) {
	got := RedrawFrame("a\nb\n")
	if got != "\x1b[Ha\x1b[K\nb\x1b[K\n\x1b[J" || strings.Contains(got, "\x1b[2J") {
		t.Fatalf("%q", got)
	}
}

// Each story says where it runs: status --json units carry "host" (local
// for a run from before hosts), and the text names a remote host.
func TestStatusNamesEachStorysHost(t *testing.T) {
	st := &orchestrator.State{RunID: "run-1", Status: orchestrator.RunRunning, Units: []*orchestrator.Unit{
		{Key: "1-1", Dotted: "1.1", Kind: orchestrator.KindStory, Status: orchestrator.StatusRunning, Host: "big"},
		{Key: "1-2", Dotted: "1.2", Kind: orchestrator.KindStory, Status: orchestrator.StatusPending},
	}}
	r := RunOf(st, "/p/.story-automator/runs/run-1.md")
	if r.Units[0].Host != "big" || r.Units[1].Host != "local" {
		t.Fatalf("hosts %q %q", r.Units[0].Host, r.Units[1].Host)
	}
	var b strings.Builder
	WriteText(&b, View{Run: r}, time.Now())
	if !strings.Contains(b.String(), "on host big") || strings.Contains(b.String(), "on host local") {
		t.Fatalf("status text:\n%s", b.String())
	}
}

// A retrospective's verdict shows in status; accepted-with-open-items lists
// its action items (text and JSON); an accepted one does not list them.
func TestStatusListsARetrospectivesOpenActionItems(t *testing.T) {
	items := []string{"Add error handling (owner: dev)", "Write the settings docs"}
	st := &orchestrator.State{RunID: "run-1", Status: orchestrator.RunDone, Units: []*orchestrator.Unit{
		{Key: "epic-1-retro", Dotted: "epic 1", Kind: orchestrator.KindRetro, Status: orchestrator.StatusDone,
			Retro: &orchestrator.RetroVerdict{Document: "out/epic-1-retro-2026-12-01.md", Verdict: "accepted-with-open-items", ActionItems: items}},
		{Key: "epic-2-retro", Dotted: "epic 2", Kind: orchestrator.KindRetro, Status: orchestrator.StatusDone,
			Retro: &orchestrator.RetroVerdict{Document: "out/epic-2-retro-2026-12-01.md", Verdict: "accepted", ActionItems: []string{"A process lesson"}}},
	}}
	r := RunOf(st, "/p/.story-automator/runs/run-1.md")
	data, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(data), `"retro":{"document":"out/epic-1-retro-2026-12-01.md","verdict":"accepted-with-open-items"`) ||
		!strings.Contains(string(data), `"actionItems":["Add error handling (owner: dev)","Write the settings docs"]`) {
		t.Fatalf("JSON %s, %v", data, err)
	}
	var b strings.Builder
	WriteText(&b, View{Run: r}, time.Now())
	text := b.String()
	for _, want := range []string{"verdict accepted-with-open-items (out/epic-1-retro-2026-12-01.md)", "open action items:", "- Add error handling (owner: dev)", "- Write the settings docs", "verdict accepted (out/epic-2-retro"} {
		if !strings.Contains(text, want) {
			t.Fatalf("status text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "A process lesson") {
		t.Fatalf("an accepted retrospective's items listed as open:\n%s", text)
	}
}

// A sweep or action unit shows its kind and items in status (JSON and
// text), an item closed by hand meanwhile marked skipped; a story's unit
// carries neither.
func TestStatusShowsSweepAndActionUnits(t *testing.T) {
	st := &orchestrator.State{RunID: "run-1", Status: orchestrator.RunRunning, Units: []*orchestrator.Unit{
		{Key: "sweep-1", Dotted: "sweep 1", Kind: orchestrator.KindSweep, Status: orchestrator.StatusRunning,
			Work: &orchestrator.Work{Source: "out/spec-1-1-sign-up.md", Skipped: []string{"dw-2"}, Items: []orchestrator.WorkItem{
				{ID: "dw-1", Summary: "Retry test is flaky", Severity: "medium"}, {ID: "dw-2", Summary: "Typo"}}}},
		{Key: "epic-1-retro-item-1-add-ci", Dotted: "epic-1-retro-item-1-add-ci", Kind: orchestrator.KindAction, Status: orchestrator.StatusPending,
			Work: &orchestrator.Work{Source: "out/epic-1-retro.md", Items: []orchestrator.WorkItem{{ID: "epic-1-retro-item-1-add-ci", Summary: "Add CI", Owner: "dev"}}}},
		{Key: "1-1", Dotted: "1.1", Kind: orchestrator.KindStory, Status: orchestrator.StatusPending},
	}}
	r := RunOf(st, "/p/.story-automator/runs/run-1.md")
	data, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(data), `"kind":"sweep","work":{"source":"out/spec-1-1-sign-up.md","items":[{"id":"dw-1","summary":"Retry test is flaky","severity":"medium"}`) ||
		!strings.Contains(string(data), `"kind":"action"`) || r.Units[2].Kind != "" || r.Units[2].Work != nil {
		t.Fatalf("JSON %s, %v", data, err)
	}
	var b strings.Builder
	WriteText(&b, View{Run: r}, time.Now())
	text := b.String()
	for _, want := range []string{"deferred findings of out/spec-1-1-sign-up.md:", "dw-1 [medium] Retry test is flaky",
		"dw-2 Typo (closed by hand meanwhile: skipped)", "retrospective action item of out/epic-1-retro.md:", "epic-1-retro-item-1-add-ci Add CI"} {
		if !strings.Contains(text, want) {
			t.Fatalf("status text lacks %q:\n%s", want, text)
		}
	}
}

// The board's action items not yet done show in status (text and JSON),
// with or without a run; done ones do not.
func TestStatusListsTheBoardsOpenActionItems(t *testing.T) {
	root := t.TempDir()
	board := "development_status:\n  epic-1: done\naction_items:\n" +
		"  - id: \"epic-1-retro-item-1-add-ci\"\n    epic: 1\n    action: \"Add CI\"\n    owner: \"dev\"\n    status: open\n    ref: \"r.md\"\n" +
		"  - id: \"epic-1-retro-item-2-docs\"\n    epic: 1\n    action: \"Docs\"\n    owner: \"pm\"\n    status: done\n    ref: \"r.md\"\n"
	path := filepath.Join(root, "_bmad-output", "implementation-artifacts", "sprint-status.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(board), 0o644); err != nil {
		t.Fatal(err)
	}
	v, _ := Gather(root, func(string) string { return "" }, time.Now, &bytes.Buffer{}, func() ([]Session, []string) { return nil, nil })
	data, err := json.Marshal(v)
	if err != nil || !strings.Contains(string(data), `"actionItems":[{"id":"epic-1-retro-item-1-add-ci","epic":1,"action":"Add CI","owner":"dev","status":"open","ref":"r.md"}]`) {
		t.Fatalf("JSON %s, %v", data, err)
	}
	var b strings.Builder
	WriteText(&b, v, time.Now())
	if !strings.Contains(b.String(), "Action items on the board (1 not done; `story-automator run --action-items` takes them up):\n  epic-1-retro-item-1-add-ci [open] Add CI (owner: dev)\n") ||
		strings.Contains(b.String(), "Docs") {
		t.Fatalf("status text:\n%s", b.String())
	}
}

// A parked story shows as parked with its reason, action and ref, in the
// text and in JSON.
func TestStatusShowsAParkedStory(t *testing.T) {
	p := &orchestrator.Parked{Step: "dev", Code: "build_auto_blocked", Reason: `dev story of 1.1: blocked: "intent gap"`,
		Action: "Answer the questions in the spec.", Ref: "refs/story-automator/parked/run-1/1-1", Commit: "abc"}
	st := &orchestrator.State{RunID: "run-1", Status: orchestrator.RunPaused, PauseReason: "done with parked stories (1.1)", Units: []*orchestrator.Unit{
		{Key: "1-1", Dotted: "1.1", Kind: orchestrator.KindStory, Status: orchestrator.StatusParked, Parked: p},
		{Key: "1-2", Dotted: "1.2", Kind: orchestrator.KindStory, Status: orchestrator.StatusDone},
	}}
	r := RunOf(st, "/p/.story-automator/runs/run-1.md")
	data, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(data), `"status":"parked"`) ||
		!strings.Contains(string(data), `"parked":{"at":"","step":"dev","reason":"dev story of 1.1: blocked: \"intent gap\"","action":"Answer the questions in the spec.","code":"build_auto_blocked","ref":"refs/story-automator/parked/run-1/1-1"`) {
		t.Fatalf("JSON %s, %v", data, err)
	}
	var b strings.Builder
	WriteText(&b, View{Run: r}, time.Now())
	for _, want := range []string{"1.1      parked", `parked at dev: dev story of 1.1: blocked: "intent gap"`, "what to do: Answer the questions in the spec.",
		"its work: refs/story-automator/parked/run-1/1-1", "Paused: done with parked stories (1.1)"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("status text lacks %q:\n%s", want, b.String())
		}
	}
}
