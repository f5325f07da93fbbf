package dashboard

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/runview"
	"github.com/story-automator/story-automator/status"
	"github.com/story-automator/story-automator/workflows"
)

// liveView is the working child's screen as tmux shows it, colours and all.
func (m Model) liveView(f *frame, body int) {
	s := m.styles
	name := m.workingSession()
	if name == "" {
		f.add("No child session is working right now.")
		f.add(s.dim.Render(fmt.Sprintf("Looking on tmux server %q.", socketName(m.snap.Socket))))
		return
	}
	if w, remote := m.snap.Remote[name]; remote {
		f.add(s.title.Render(name) + s.dim.Render(" · "+m.sessionText(name)+" · on "+w.Host))
	} else {
		f.add(s.title.Render(name) + s.dim.Render(" · "+m.sessionText(name)+" · ") + s.key.Render("a") + " attaches")
	}
	if m.paneOf != name {
		f.add("Reading the session's screen…")
		return
	}
	lines := strings.Split(strings.TrimRight(m.pane, "\n"), "\n")
	if len(lines) > body-1 {
		lines = lines[len(lines)-(body-1):]
	}
	for _, l := range lines {
		f.add(l + "\x1b[m")
	}
}

func socketName(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// sessionText says what a session works on: story, step, agent.
func (m Model) sessionText(name string) string {
	for _, s := range m.snap.Status.Sessions {
		if s.Session == name {
			return strings.TrimSpace(fmt.Sprintf("story %s %s · %s", m.storyName(s.Story), s.Step, textline.OrDash(s.Agent)))
		}
	}
	return ""
}

// runsView is the project's runs, as `runs` lists them.
func (m Model) runsView(f *frame, body int) {
	if len(m.snap.Runs) == 0 {
		f.add("No runs in this project yet (start one with `story-automator run`).")
		return
	}
	var b strings.Builder
	runview.WriteRunsTable(&b, m.snap.Runs)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	f.add(m.styles.dim.Render(lines[0]))
	for i, l := range lines[1:] {
		if i >= body-1 {
			break
		}
		f.add(l)
	}
}

// loopsView is the prompt loop: its iteration and last decision, then the
// Stop hook's history of decisions, newest first.
func (m Model) loopsView(f *frame, body int) {
	s := m.styles
	mk := m.snap.Status.Marker.Marker
	if mk != nil && mk.Mode == marker.ModeLoop && mk.Loop != nil {
		l := mk.Loop
		f.add(s.title.Render(fmt.Sprintf("Loop · %s · iteration %d of %s", mk.Status, l.Iteration, maxText(l.MaxIterations))) +
			s.dim.Render(" · exit "+textline.OrDash(l.ExitStrategy)))
		f.add("prompt: " + textline.OneLine(l.Prompt))
	} else {
		f.add("No prompt loop in this project (start one with `story-automator loop start`).")
	}
	if d := m.snap.Status.LastDecision; d != nil {
		f.add(fmt.Sprintf("last decision: %s — %s", d.Decision, textline.OneLine(d.Reason)))
	}
	f.add("")
	f.add(s.dim.Render(fmt.Sprintf("%-20s %-6s %-9s %4s  %s", "when", "mode", "decision", "iter", "reason")))
	room := body - len(f.lines) + 3
	for i := len(m.snap.Hook) - 1; i >= 0 && room > 0; i, room = i-1, room-1 {
		h := m.snap.Hook[i]
		f.add(fmt.Sprintf("%-20s %-6s %-9s %4d  %s", textline.Cut(h.TS, 20), h.Mode, h.Decision, h.Iteration, textline.OneLine(h.Reason)))
	}
}

// deferredView is the project's open deferred items, as `deferred` lists
// them (without collecting: the dashboard changes nothing unasked).
func (m Model) deferredView(f *frame, body int) {
	s := m.styles
	where := workflows.DeferredWorkFile
	if rel, err := filepath.Rel(m.src.Root, m.snap.DeferredPath); err == nil && m.snap.DeferredPath != "" && !strings.HasPrefix(rel, "..") {
		where = rel
	}
	switch {
	case m.snap.DeferredError != "":
		f.add(s.bad.Render(workflows.DeferredWorkFile + " cannot be read:"))
		for _, l := range wrapped(textline.OneLine(m.snap.DeferredError), m.width) {
			f.add(l)
		}
		f.add(s.dim.Render("Fix that line by hand; nothing writes the file until it reads."))
		return
	case len(m.snap.Deferred) == 0:
		f.add("No open deferred items.")
		f.add(s.dim.Render("`story-automator deferred` collects them from the done specs into " + where + "."))
		return
	}
	f.add(s.title.Render(fmt.Sprintf("%d open deferred item(s)", len(m.snap.Deferred))) + s.dim.Render(" · "+where))
	var b strings.Builder
	status.WriteDeferredTable(&b, m.snap.Deferred)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	f.add(s.dim.Render(lines[0]))
	for i, l := range lines[1:] {
		if i >= body-2 {
			break
		}
		f.add(l)
	}
}

// actionsView is the board's retrospective action items not yet done, as
// `status` lists them, with the command that takes them up as work.
func (m Model) actionsView(f *frame, body int) {
	s, snap := m.styles, m.snap
	where := workflows.SprintStatusFile
	if rel, err := filepath.Rel(m.src.Root, snap.BoardPath); err == nil && snap.BoardPath != "" && !strings.HasPrefix(rel, "..") {
		where = rel
	}
	take := "`story-automator run --action-items` takes them up: each runs as work, moved open → in-progress → done on the board."
	items := snap.Status.ActionItems
	switch {
	case snap.BoardError != "":
		f.add(s.bad.Render(workflows.SprintStatusFile + " cannot be read:"))
		for _, l := range wrapped(textline.OneLine(snap.BoardError), m.width) {
			f.add(l)
		}
		f.add(s.dim.Render("Fix that line by hand (BMAD's `sprint_plan.py validate` checks the board); its action items show once it reads."))
		return
	case len(items) == 0:
		f.add("No open action items on the board.")
		for _, l := range wrapped("A retrospective adds them to "+where+"; "+take, m.width) {
			f.add(s.dim.Render(l))
		}
		return
	}
	f.add(s.title.Render(fmt.Sprintf("%d action item(s) not done on the board", len(items))) + s.dim.Render(" · "+where))
	hint := wrapped(take, m.width)
	for _, l := range hint {
		f.add(l)
	}
	var b strings.Builder
	status.WriteActionItemsTable(&b, items)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	f.add(s.dim.Render(lines[0]))
	for i, l := range lines[1:] {
		if i >= body-2-len(hint) {
			break
		}
		f.add(l)
	}
}

func maxText(n int) string {
	if n <= 0 {
		return "∞"
	}
	return fmt.Sprint(n)
}

// helpView is every key and what the grid's marks mean.
func (m Model) helpView(f *frame, _ int) {
	f.add(m.styles.title.Render("Keys"))
	f.add(m.help.FullHelpView(m.keys.FullHelp()))
	f.add("")
	f.add(m.styles.title.Render("Marks") + "  ✓ verified  ▶ running  · pending  – skipped  ✗ failed  ! escalated/parked")
	for _, l := range wrapped("Every action is the command's own: pause is `marker pause`; stop is the run's Ctrl-C "+
		"(asked once); resume starts `"+orchestrator.ResumeCommand+"` on its own, its output in the run's .log; "+
		"attach is `session attach` (C-b d comes back); resolve is `resolve STORY`; continue resumes at a checkpoint "+
		"or confirms a parked story; replan sends the plan to draft. Nothing happens unasked.", m.width) {
		f.add(l)
	}
}
