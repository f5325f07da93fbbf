package dashboard

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/orchestrator"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the frames rendered now")

// frameCase is one view of one fixture at one size.
type frameCase struct {
	name          string
	width, height int
	snap          Snapshot
	setup         func(*Model)
}

func frameCases() []frameCase {
	long := fixtureState(4)
	long.Units[1].Title = strings.Repeat("A story whose title goes on and on past any terminal's edge ", 5)
	many := fixtureState(200)
	dialog := fixtureState(4)
	dialog.Status = orchestrator.RunPaused
	dialog.Units[1].Status, dialog.Units[1].Steps[1].Status = orchestrator.StatusEscalated, orchestrator.StatusEscalated
	dialog.Units[1].Steps[1].Attempts[1] = attempt(2, "stuck", "dialog", 61000)
	dialog.Escalation = &orchestrator.Escalation{Unit: "1.2", Step: "dev", Reason: "the agent waits at a dialog only you can answer: \"Do you trust the files in this folder?\"",
		Action: "answer it in the session (`story-automator session attach sa-demo-1-2-dev`), or trust the folder with --trust-project", Code: "dialog"}
	waiting := fixtureState(4)
	waiting.Status, waiting.PauseReason = runWaiting, "every agent is at its usage limit (claude: usage_limit)"
	waitSnap := snapshotOf(waiting)
	waitSnap.Waiting.Until = fixedNow.Add(4*time.Minute + 12*time.Second)
	// Its document says running; no process holds its run lock.
	interrupted := seenSnapshotOf(fixtureState(4), false)
	// Its document says waiting on a limit; no process holds its run lock:
	// nobody waits, it is interrupted too.
	waitedDead := fixtureState(4)
	waitedDead.Status, waitedDead.PauseReason = runWaiting, "every agent is at its usage limit (claude: usage_limit)"
	live := snapshotOf(fixtureState(4))
	retro := fixtureState(2)
	retro.Units = append(retro.Units, &orchestrator.Unit{Key: "epic-1-retro", Kind: orchestrator.KindRetro, Epic: "1", Dotted: "epic 1",
		Title: "retrospective", Status: orchestrator.StatusDone, Steps: []*orchestrator.StepState{
			{Name: "retro", Status: orchestrator.StatusVerified, Attempts: []orchestrator.Attempt{attempt(1, "completed", "", 30000)}},
			{Name: "commit", Status: orchestrator.StatusVerified}},
		Retro: &orchestrator.RetroVerdict{Document: "_bmad-output/implementation-artifacts/epic-1-retro-2026-11-22.md",
			Verdict: "accepted-with-open-items", ActionItems: []string{"Add error handling to the sign-up form (owner: dev)", "Document the settings API (owner: pm)"}}})
	return []frameCase{
		{name: "run-80x24", width: 80, height: 24, snap: snapshotOf(fixtureState(4)), setup: selectStory(1)},
		{name: "run-120x40", width: 120, height: 40, snap: snapshotOf(fixtureState(4)), setup: selectStory(1)},
		{name: "long-title-80x24", width: 80, height: 24, snap: snapshotOf(long), setup: selectStory(1)},
		{name: "200-stories-120x40", width: 120, height: 40, snap: snapshotOf(many), setup: selectStory(150)},
		{name: "dialog-escalation-100x30", width: 100, height: 30, snap: snapshotOf(dialog), setup: selectStory(1)},
		{name: "waiting-80x24", width: 80, height: 24, snap: waitSnap},
		{name: "interrupted-80x24", width: 80, height: 24, snap: interrupted},
		{name: "interrupted-waiting-80x24", width: 80, height: 24, snap: seenSnapshotOf(waitedDead, false)},
		{name: "retro-open-items-100x30", width: 100, height: 30, snap: snapshotOf(retro), setup: selectStory(2)},
		{name: "no-run-80x24", width: 80, height: 24, snap: Snapshot{}},
		{name: "live-80x24", width: 80, height: 24, snap: live, setup: func(m *Model) {
			m.view, m.paneOf = viewLive, "sa-demo-1-2-dev"
			m.pane = "\x1b[32m● sim\x1b[0m working on story 1.2 (dev)\n\x1b[1mEditing\x1b[0m src/greet.py\nRunning tests… \x1b[31m1 failed\x1b[0m\n"
		}},
		{name: "remote-80x24", width: 80, height: 24, snap: remoteSnapshot(), setup: selectStory(1)},
		{name: "live-remote-80x24", width: 80, height: 24, snap: remoteSnapshot(), setup: func(m *Model) {
			m.view, m.paneOf = viewLive, "sa-demo-1-2-dev-2"
			m.pane = "sim working on story 1.2 (dev) on gpu1\nRunning tests…\n"
		}},
		{name: "runs-100x30", width: 100, height: 30, snap: snapshotOf(fixtureState(4)), setup: func(m *Model) { m.view = viewRuns }},
		{name: "loops-80x24", width: 80, height: 24, snap: loopSnapshot(), setup: func(m *Model) { m.view = viewLoops }},
		{name: "deferred-100x30", width: 100, height: 30, snap: deferredSnapshot(), setup: func(m *Model) { m.view = viewDeferred }},
		{name: "deferred-none-80x24", width: 80, height: 24, snap: snapshotOf(fixtureState(4)), setup: func(m *Model) { m.view = viewDeferred }},
		{name: "parked-100x30", width: 100, height: 30, snap: snapshotOf(parkedState()), setup: selectStory(1)},
		{name: "parked-80x24", width: 80, height: 24, snap: snapshotOf(parkedState()), setup: selectStory(1)},
		{name: "done-with-parked-80x24", width: 80, height: 24, snap: snapshotOf(doneWithParkedState()), setup: selectStory(1)},
		{name: "runs-done-with-parked-100x30", width: 100, height: 30, snap: snapshotOf(doneWithParkedState()), setup: func(m *Model) { m.view = viewRuns }},
		{name: "sweep-100x30", width: 100, height: 30, snap: snapshotOf(leftoverState(3))},
		{name: "sweep-long-80x24", width: 80, height: 24, snap: snapshotOf(leftoverState(40))},
		{name: "action-unit-100x30", width: 100, height: 30, snap: snapshotOf(leftoverState(3)), setup: selectStory(1)},
		{name: "action-items-100x30", width: 100, height: 30, snap: boardSnapshot(), setup: func(m *Model) { m.view = viewActions }},
		{name: "action-items-none-80x24", width: 80, height: 24, snap: snapshotOf(fixtureState(4)), setup: func(m *Model) { m.view = viewActions }},
		{name: "help-80x24", width: 80, height: 24, snap: snapshotOf(fixtureState(4)), setup: func(m *Model) { m.showHelp = true }},
		{name: "confirm-stop-80x24", width: 80, height: 24, snap: snapshotOf(fixtureState(4)), setup: func(m *Model) {
			next, _ := m.key(keyPress("s"))
			*m = next.(Model)
		}},
	}
}

func selectStory(i int) func(*Model) { return func(m *Model) { m.selected = i; m.clampSelection() } }

// render is the frame of c, with colour or without.
func (c frameCase) render(color bool) string {
	m := New(fixedSource(), Controls{}, color).WithSnapshot(c.snap, c.width, c.height)
	if c.setup != nil {
		c.setup(&m)
	}
	return m.Render()
}

// Each view at a fixed size matches its golden frame (escape sequences
// stripped), fills exactly the screen and never runs past its width.
func TestFramesMatchTheirGoldens(t *testing.T) {
	for _, c := range frameCases() {
		t.Run(c.name, func(t *testing.T) {
			got := ansi.Strip(c.render(true))
			lines := strings.Split(got, "\n")
			if len(lines) != c.height {
				t.Fatalf("%d lines, want %d", len(lines), c.height)
			}
			for i, l := range lines {
				if w := textline.Width(l); w > c.width {
					t.Fatalf("line %d is %d cells wide (max %d): %q", i, w, c.width, l)
				}
			}
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Fatalf("frame differs from %s:\n%s", path, got)
			}
		})
	}
}

// colour is any SGR that sets a foreground or background colour.
var colour = regexp.MustCompile(`\x1b\[[0-9;]*(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;[0-9;]*)?m`)

// Without colour (NO_COLOR) no view sets one, but the selection still shows.
func TestNoColorFramesSetNoColour(t *testing.T) {
	for _, c := range frameCases() {
		if c.name == "live-80x24" {
			continue // the child's own colours: the program's colour profile strips them
		}
		got := c.render(false)
		if loc := colour.FindStringIndex(got); loc != nil {
			t.Fatalf("%s: a colour at %d: %q", c.name, loc[0], got[max(0, loc[0]-20):loc[1]])
		}
	}
	if got := frameCases()[0].render(false); !strings.Contains(got, "\x1b[7m") {
		t.Fatal("without colour the selected story must still show (reverse video)")
	}
}
