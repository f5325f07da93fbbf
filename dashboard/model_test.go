package dashboard

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func keyPress(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func press(t *testing.T, m Model, keys ...string) (Model, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, k := range keys {
		var next tea.Model
		next, cmd = m.Update(keyPress(k))
		m = next.(Model)
	}
	return m, cmd
}

// Keys move the selection and switch views; q quits.
func TestKeysSelectSwitchAndQuit(t *testing.T) {
	m := New(fixedSource(), Controls{}, true).WithSnapshot(snapshotOf(fixtureState(4)), 80, 24)
	m, _ = press(t, m, "down", "down", "j")
	if m.selected != 3 {
		t.Fatalf("selected %d after three downs, want 3", m.selected)
	}
	m, _ = press(t, m, "j")
	if m.selected != 3 {
		t.Fatal("the selection must stop at the last story")
	}
	m, _ = press(t, m, "2")
	if m.view != viewLive || !strings.Contains(m.Render(), "sa-demo-1-2-dev") {
		t.Fatalf("2 must show the live pane of the working child:\n%s", m.Render())
	}
	m, _ = press(t, m, "tab", "tab")
	if m.view != viewLoops {
		t.Fatalf("view %d after two tabs from live, want loops", m.view)
	}
	_, cmd := press(t, m, "q")
	if cmd == nil {
		t.Fatal("q must quit")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q must quit")
	}
}

// A destructive action asks once: anything but y does nothing.
func TestStopAsksOnceAndAnythingButYesCancels(t *testing.T) {
	m := New(fixedSource(), Controls{}, true).WithSnapshot(snapshotOf(fixtureState(4)), 80, 24)
	m, cmd := press(t, m, "s")
	if cmd != nil || m.confirm == nil || !strings.Contains(m.Render(), "Stop the run?") {
		t.Fatal("s must ask before stopping")
	}
	m, cmd = press(t, m, "n")
	if cmd != nil || m.confirm != nil || !strings.Contains(m.Render(), "nothing done") {
		t.Fatal("n must cancel the stop")
	}
	m, _ = press(t, m, "s")
	_, cmd = press(t, m, "y")
	if cmd == nil {
		t.Fatal("y must stop")
	}
	if note, ok := cmd().(noteMsg); !ok || note.err == nil {
		t.Fatalf("stopping a project with no live run must say so: %+v", note)
	}
}

// Resume is offered only for a run that needs it.
func TestResumeOnlyWhatNeedsIt(t *testing.T) {
	m := New(fixedSource(), Controls{}, true).WithSnapshot(snapshotOf(fixtureState(4)), 80, 24)
	m, cmd := press(t, m, "r")
	if cmd != nil || !strings.Contains(m.Render(), "nothing to resume: the run is running") {
		t.Fatalf("r on a running run must do nothing:\n%s", m.Render())
	}
}

// A resize redraws the frame at the new size, cut to its width.
func TestResizeRedrawsAtTheNewSize(t *testing.T) {
	m := New(fixedSource(), Controls{}, true).WithSnapshot(snapshotOf(fixtureState(40)), 80, 24)
	for _, size := range []tea.WindowSizeMsg{{Width: 132, Height: 50}, {Width: 60, Height: 16}} {
		next, _ := m.Update(size)
		m = next.(Model)
		lines := strings.Split(m.Render(), "\n")
		if len(lines) != size.Height {
			t.Fatalf("%dx%d: %d lines", size.Width, size.Height, len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > size.Width {
				t.Fatalf("%dx%d: a line %d wide: %q", size.Width, size.Height, w, l)
			}
		}
	}
}
