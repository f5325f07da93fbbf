package dashboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// parkedRef is where the fixtures' parked story keeps its work.
const parkedRef = "refs/story-automator/parked/run-20261122-120000-abcd/1-2"

// parkedState is the fixture with 1.2 parked at dev (its work kept on its
// ref) while 1.3 runs.
func parkedState() *orchestrator.State {
	st := fixtureState(4)
	p := st.Units[1]
	p.Status, p.Steps[1].Status = orchestrator.StatusParked, orchestrator.StatusEscalated
	p.Steps[1].Attempts[1] = attempt(2, "completed", "", 61000)
	p.Parked = &orchestrator.Parked{At: "2026-11-22T12:05:00Z", Step: "dev", Code: "build_auto_blocked",
		Reason: "dev story of 1.2: the worker stopped: intent gap: the spec asks for names, the code has none",
		Action: "Answer the spec's questions under Intent Gap. Its work is kept at " + parkedRef + " and the tree is left clean for the next story, " +
			"its spec among the work: `story-automator resolve 1.2` and `story-automator run --resume` bring it back first.", Ref: parkedRef, Commit: "fedcba9876543210"}
	run := st.Units[2]
	run.Status = orchestrator.StatusRunning
	run.Steps[0].Status, run.Steps[0].Attempts = orchestrator.StatusRunning, []orchestrator.Attempt{{N: 1, Agent: "sim", StartedAt: "2026-11-22T12:06:00Z"}}
	return st
}

// doneWithParkedState is a run that did every story but 1.2, parked, as
// the run leaves it when it ends done_with_parked.
func doneWithParkedState() *orchestrator.State {
	st := parkedState()
	st.Status, st.FinishedAt = orchestrator.RunPaused, "2026-11-22T12:09:30Z"
	st.PauseReason = "done with parked stories (1.2): settle each as its action says, then run `story-automator run --resume`"
	for _, i := range []int{2, 3} {
		u := st.Units[i]
		u.Status, u.Commit = orchestrator.StatusDone, fmt.Sprintf("%d123456789abcdef", i)
		for _, s := range u.Steps {
			s.Status, s.Attempts = orchestrator.StatusVerified, []orchestrator.Attempt{attempt(1, "completed", "", 30000)}
		}
	}
	return st
}

// leftoverState is a run of leftovers (run --sweep --action-items): a
// sweep unit over one spec's findings, one of them closed by hand
// meanwhile, in dev; an action unit pending.
func leftoverState(findings int) *orchestrator.State {
	st := fixtureState(2)
	sweep, action := st.Units[0], st.Units[1]
	sweep.Key, sweep.Kind, sweep.Dotted, sweep.Title = "sweep-1", orchestrator.KindSweep, "sweep 1", "deferred findings of spec-1-1-greet-the-world.md"
	sweep.Status, sweep.Commit = orchestrator.StatusRunning, ""
	sweep.Work = &orchestrator.Work{Source: "_bmad-output/implementation-artifacts/spec-1-1-greet-the-world.md", Skipped: []string{"dw-2b"}}
	for i := range findings {
		sweep.Work.Items = append(sweep.Work.Items, orchestrator.WorkItem{ID: fmt.Sprintf("dw-%d%c", i+1, 'a'+i%26),
			Summary: fmt.Sprintf("Finding number %d of the review", i+1), Severity: "medium"})
	}
	sweep.Work.Items[0].Summary, sweep.Work.Items[0].Severity = "Greeting ignores the locale", "high"
	if findings > 1 {
		sweep.Work.Items[1].Summary, sweep.Work.Items[1].Severity = "Names with spaces are cut", ""
	}
	sweep.Steps[3].Status = orchestrator.StatusRunning
	action.Key, action.Kind, action.Dotted, action.Title = "epic-1-retro-item-1-add-ci", orchestrator.KindAction, "epic-1-retro-item-1-add-ci", "Add CI"
	action.Status, action.Steps[0].Status, action.Steps[1].Status, action.Steps[1].Attempts = orchestrator.StatusPending, orchestrator.StatusPending, orchestrator.StatusPending, nil
	action.Steps[0].Attempts = nil
	action.Work = &orchestrator.Work{Source: "_bmad-output/implementation-artifacts/epic-1-retro-2026-11-20.md",
		Items: []orchestrator.WorkItem{{ID: "epic-1-retro-item-1-add-ci", Summary: "Add CI", Owner: "dev"}}}
	st.Config.Leftovers = &orchestrator.Leftovers{Sweep: true, ActionItems: true}
	return st
}

// boardSnapshot is the fixture's run with two action items not yet done on
// its project's board.
func boardSnapshot() Snapshot {
	snap := snapshotOf(fixtureState(4))
	snap.BoardPath = "/p/_bmad-output/implementation-artifacts/sprint-status.yaml"
	snap.Status.ActionItems = []workflows.ActionItem{
		{ID: "epic-1-retro-item-1-add-error-handling-to-the-sign-up-form", Epic: 1, Action: "Add error handling to the sign-up form",
			Owner: "dev", Status: workflows.ActionOpen, Ref: "_bmad-output/implementation-artifacts/epic-1-retro-2026-11-20.md"},
		{ID: "epic-1-retro-item-2-document-the-settings-api", Epic: 1, Action: "Document the settings API", Status: workflows.ActionInProgress},
	}
	return snap
}

// frameOf is the frame, without colour, of snap after keys.
func frameOf(t *testing.T, snap Snapshot, width, height int, keys ...string) string {
	t.Helper()
	m := New(fixedSource(), Controls{}, false).WithSnapshot(snap, width, height)
	m, _ = press(t, m, keys...)
	return ansi.Strip(m.Render())
}

func mustContain(t *testing.T, frame string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(frame, want) {
			t.Fatalf("no %q in:\n%s", want, frame)
		}
	}
}

// A parked story's row says parked and the header counts it; its detail
// says why, what to do, where its work is and which keys settle it, as
// `status` does.
func TestParkedStoryShowsWhyWhatAndTheKeys(t *testing.T) {
	frame := frameOf(t, snapshotOf(parkedState()), 120, 40, "j")
	mustContain(t, frame, "1/4 stories done, 1 parked",
		"▸ 1.2   Greet by name", "parked",
		"Parked: dev story of 1.2: the worker stopped: intent gap",
		"What to do: Answer the spec's questions under Intent Gap. Its work is kept at",
		"Its work is kept at "+parkedRef+" (fedcba9)",
		"Press v to resolve it with an agent: story-automator resolve 1.2",
		"Press c to confirm it once you have fixed it yourself: story-automator resolve 1.2 --no-interactive",
		"Then r resumes the run once it has stopped: "+orchestrator.ResumeCommand)
	other := frameOf(t, snapshotOf(parkedState()), 120, 40)
	if strings.Contains(other, "Parked:") || !strings.Contains(other, ", 1 parked") {
		t.Fatalf("another story's detail shows the park, or the header forgets it:\n%s", other)
	}
}

// A run that ended with only parked stories left says done_with_parked in
// its header, names them with the keys, and in the runs view.
func TestDoneWithParkedRunSaysSo(t *testing.T) {
	snap := snapshotOf(doneWithParkedState())
	frame := frameOf(t, snap, 100, 30)
	mustContain(t, frame, "● done_with_parked  run-20261122-120000-abcd", "3/4 stories done, 1 parked",
		"parked: 1.2 (v resolve, c confirm) · r resumes: "+orchestrator.ResumeCommand)
	runs := frameOf(t, snap, 100, 30, "3")
	mustContain(t, runs, "run-20261122-120000-abcd  2026-11-22 12:00  done_with_parked")
	// A run paused with an escalation stays escalated.
	esc := doneWithParkedState()
	esc.Escalation = &orchestrator.Escalation{Unit: "1.2", Step: "dev", Reason: "why", Action: "what"}
	if f := frameOf(t, snapshotOf(esc), 100, 30); !strings.Contains(f, "● escalated") {
		t.Fatalf("an escalated run is shown as:\n%s", f)
	}
}

// Sweep and action units sit in the grid like stories; the selected one's
// detail lists its items as `status` does, a long list cut to the screen.
func TestSweepAndActionUnitsShowTheirItems(t *testing.T) {
	snap := snapshotOf(leftoverState(3))
	frame := frameOf(t, snap, 100, 30)
	mustContain(t, frame, "0/2 units done", "▸ sweep 1", "  epic-1-retro-item-1… Add CI",
		"deferred findings of _bmad-output/implementation-artifacts/spec-1-1-greet-the-world.md:",
		"dw-1a [high] Greeting ignores the locale", "dw-2b Names with spaces are cut (closed by hand meanwhile: skipped)",
		"dw-3c [medium] Finding number 3 of the review")
	action := frameOf(t, snap, 100, 30, "j")
	mustContain(t, action, "retrospective action item of _bmad-output/implementation-artifacts/epic-1-retro-2026-11-20.md:",
		"  epic-1-retro-item-1-add-ci Add CI")
	long := frameOf(t, snapshotOf(leftoverState(40)), 80, 24)
	mustContain(t, long, "dw-1a [high] Greeting ignores the locale", "more (story-automator status lists them all)")
	if strings.Contains(long, "dw-40") {
		t.Fatalf("the last of 40 items fits no 80×24 screen:\n%s", long)
	}
}

// v and c are for stories: on a parked sweep or action unit they call
// nothing and say what to do instead.
func TestResolveKeysLeaveAParkedSweepUnitAlone(t *testing.T) {
	st := leftoverState(2)
	st.Units[0].Status = orchestrator.StatusParked
	st.Units[0].Parked = &orchestrator.Parked{Step: "review", Reason: "review sweep unit of sweep 1: out of retries", Action: "Fix it by hand."}
	for _, k := range []string{"v", "c"} {
		rec := &calls{}
		m := New(fixedSource(), rec.controls(), false).WithSnapshot(snapshotOf(st), 100, 30)
		m, cmd := press(t, m, k)
		if cmd != nil || len(rec.got) > 0 || !strings.Contains(m.note.text, "sweep 1 is parked: resolve and confirm take stories") {
			t.Fatalf("%s: calls %q, note %q", k, rec.got, m.note.text)
		}
		mustContain(t, ansi.Strip(m.Render()), "What to do: Fix it by hand.", "Once it is settled, r resumes the run")
	}
}

// boardSource is a project whose board (sprint-status.yaml) is text.
func boardSource(t *testing.T, text string) Source {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "_bmad-output/implementation-artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, workflows.SprintStatusFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Source{Root: root, Getenv: func(string) string { return "" }, Now: time.Now,
		Socket: fmt.Sprintf("sa-test-none-%d", os.Getpid())}
}

const board = "development_status:\n  epic-1: done\naction_items:\n" +
	"  - id: \"epic-1-retro-item-1-add-ci\"\n    epic: 1\n    action: \"Add CI\"\n    owner: \"dev\"\n    status: open\n    ref: \"r.md\"\n" +
	"  - id: \"epic-1-retro-item-2-docs\"\n    epic: 1\n    action: \"Write the docs\"\n    owner: \"pm\"\n    status: in-progress\n    ref: \"r.md\"\n" +
	"  - id: \"epic-1-retro-item-3-lint\"\n    epic: 1\n    action: \"Turn on the linter\"\n    status: done\n    ref: \"r.md\"\n"

// 6 lists the board's action items not yet done, read as `status` reads
// them, with the command that takes them up; a done one is not there.
func TestActionItemsViewListsTheBoardsOpenItems(t *testing.T) {
	src := boardSource(t, board)
	m := New(src, Controls{}, false).WithSnapshot(src.Load(context.Background()), 120, 24)
	m, _ = press(t, m, "6")
	if m.view != viewActions {
		t.Fatalf("6 shows view %d", m.view)
	}
	frame := ansi.Strip(m.Render())
	mustContain(t, frame, "2 action item(s) not done on the board · _bmad-output/implementation-artifacts/sprint-status.yaml",
		"`story-automator run --action-items` takes them up",
		"open         1     dev    Add CI", "in-progress  1     pm     Write the docs", "epic-1-retro-item-2-docs")
	if strings.Contains(frame, "Turn on the linter") {
		t.Fatalf("a done item is shown:\n%s", frame)
	}
	if none := frameOf(t, snapshotOf(fixtureState(4)), 80, 24, "6"); !strings.Contains(none, "No open action items on the board.") {
		t.Fatalf("no items:\n%s", none)
	}
}

// A board that cannot be read says so, with its line.
func TestActionItemsViewSaysWhyTheBoardCannotBeRead(t *testing.T) {
	src := boardSource(t, "development_status:\n  epic-1: done\naction_items:\n  - id: \"x\"\n    status: someday\n")
	m := New(src, Controls{}, false).WithSnapshot(src.Load(context.Background()), 120, 24)
	m, _ = press(t, m, "6")
	frame := ansi.Strip(m.Render())
	mustContain(t, frame, "sprint-status.yaml cannot be read:", "line 4")
}

// The dashboard wakes when the board changes, as it does for the run's files.
func TestTheBoardChangingWakesTheDashboard(t *testing.T) {
	src := boardSource(t, board)
	snap := src.Load(context.Background())
	w := src.Watch(snap)
	defer w.Close()
	if err := os.WriteFile(snap.BoardPath, []byte(strings.Replace(board, "status: open", "status: in-progress", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C:
	case <-time.After(30 * time.Second):
		t.Fatal("no wake-up after the board was written")
	}
	if got := len(src.Load(context.Background()).Status.ActionItems); got != 2 {
		t.Fatalf("%d items after the change, want 2", got)
	}
}
