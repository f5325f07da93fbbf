package dashboard

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

// View is the whole screen, in the alternate screen buffer.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	return v
}

// Render is the frame: exactly height lines of at most width cells.
func (m Model) Render() string {
	f := &frame{width: max(m.width, 20)}
	height := max(m.height, 8)
	m.header(f)
	m.tabs(f)
	body := height - len(f.lines) - 2
	switch {
	case !m.loaded:
		f.add("Reading the project…")
	case m.showHelp:
		m.helpView(f, body)
	case m.view == viewRun:
		m.runView(f, body)
	case m.view == viewLive:
		m.liveView(f, body)
	case m.view == viewRuns:
		m.runsView(f, body)
	case m.view == viewLoops:
		m.loopsView(f, body)
	case m.view == viewDeferred:
		m.deferredView(f, body)
	case m.view == viewActions:
		m.actionsView(f, body)
	}
	f.fill(height - 2)
	m.statusLine(f)
	f.add(m.help.ShortHelpView(m.keys.ShortHelp()))
	return strings.Join(f.lines, "\n")
}

// frame collects a screen's lines, each cut to the width.
type frame struct {
	width int
	lines []string
}

func (f *frame) add(s string) {
	for _, l := range strings.Split(s, "\n") {
		f.lines = append(f.lines, ansi.Truncate(l, f.width, "…"))
	}
}

// fill pads the frame with blank lines, or cuts it, to n lines.
func (f *frame) fill(n int) {
	for len(f.lines) < n {
		f.lines = append(f.lines, "")
	}
	f.lines = f.lines[:n]
}

// header is the run's id, state, time, stories and spend, and what its
// state asks of the user.
func (m Model) header(f *frame) {
	s, r := m.styles, m.snap.Status.Run
	if r == nil {
		f.add(s.title.Render("story-automator") + "  " + s.dim.Render("no run"))
		f.add(m.pipelineText())
		f.add("")
		return
	}
	state := m.runState()
	counts := m.doneText()
	if n := len(parkedUnits(m.snap.State)); n > 0 {
		counts += s.warn.Render(fmt.Sprintf(", %d parked", n))
	}
	f.add(fmt.Sprintf("%s  %s  %s %s  %s", s.stateStyle(state).Render("● "+state), s.title.Render(r.RunID),
		s.dim.Render("elapsed"), m.elapsed(), counts))
	spendLine := orchestrator.SpendText(r.Usage, r.Budget)
	if c := m.snap.Status.Pipeline; c != nil {
		spendLine += s.dim.Render(" · pipeline ") + c.Pipeline
		if c.Mode != "" {
			spendLine += ", " + c.Mode
		}
	}
	f.add(spendLine)
	f.add(m.stateLine())
}

// pipelineText is the pipeline a run takes and why, with a count of the
// warnings about the project's BMAD files.
func (m Model) pipelineText() string {
	c := m.snap.Status.Pipeline
	if c == nil {
		return m.styles.dim.Render(m.snap.Status.PipelineError)
	}
	text := m.styles.dim.Render("pipeline ") + c.String()
	if n := len(c.Warnings); n > 0 {
		text += " · " + m.styles.warn.Render(fmt.Sprintf("%d warning(s): story-automator status", n))
	}
	return text
}

// stateLine says what the run's state asks of the user, after the spend.
func (m Model) stateLine() string {
	s, r := m.styles, m.snap.Status.Run
	resume := " · " + s.key.Render("r") + " resumes: " + orchestrator.ResumeCommand
	switch state := m.runState(); state {
	case orchestrator.RunInterrupted:
		return s.bad.Render("the run's process is gone") + resume
	case "escalated":
		return s.bad.Render("needs you at "+r.Escalation.Unit+" "+r.Escalation.Step) + resume
	case runDoneWithParked:
		return s.warn.Render("parked: "+strings.Join(parkedUnits(m.snap.State), ", ")) + " (" + s.key.Render("v") + " resolve, " +
			s.key.Render("c") + " confirm)" + resume
	case orchestrator.RunPaused:
		return s.warn.Render("paused: "+pauseText(r.PauseReason)) + resume
	case runWaiting:
		return s.warn.Render("waiting"+m.countdown()+": ") + m.snap.Waiting.Reason
	case orchestrator.RunRunning:
		return m.workingLine()
	}
	return ""
}

// doneText counts the run's stories done; a run of sweep and action
// units (run --sweep, --action-items), which has no story, counts those.
func (m Model) doneText() string {
	r := m.snap.Status.Run
	if st := m.snap.State; st != nil && r.StoriesTotal == 0 {
		done, total := 0, 0
		for _, u := range st.Units {
			if u.Kind == orchestrator.KindSweep || u.Kind == orchestrator.KindAction {
				total++
				if u.Status == orchestrator.StatusDone {
					done++
				}
			}
		}
		if total > 0 {
			return fmt.Sprintf("%d/%d units done", done, total)
		}
	}
	return fmt.Sprintf("%d/%d stories done", r.StoriesDone, r.StoriesTotal)
}

// parkedUnits names the run's parked units, in the run's order.
func parkedUnits(st *orchestrator.State) []string {
	var out []string
	if st != nil {
		for _, u := range st.Units {
			if u.Status == orchestrator.StatusParked {
				out = append(out, u.Dotted)
			}
		}
	}
	return out
}

// workingLine names the steps at work and their sessions.
func (m Model) workingLine() string {
	var parts []string
	for _, s := range m.snap.Status.Sessions {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", m.storyName(s.Story), s.Step, s.Session))
	}
	if len(parts) == 0 {
		return m.styles.dim.Render("between steps")
	}
	return m.styles.dim.Render("working: ") + strings.Join(parts, ", ")
}

// countdown is the time left of a wait whose end is known.
func (m Model) countdown() string {
	w := m.snap.Waiting
	if w == nil || w.Until.IsZero() {
		return ""
	}
	return fmt.Sprintf(", goes on in %s", max(w.Until.Sub(m.now), 0).Round(time.Second))
}

func pauseText(reason string) string {
	if reason == "" {
		return "by hand"
	}
	return reason
}

// elapsed is the run's wall time: until it finished, else until now.
func (m Model) elapsed() string {
	r := m.snap.Status.Run
	start, ok := marker.ParseTime(r.StartedAt)
	if !ok {
		return "—"
	}
	end := m.now
	if st := m.snap.State; st != nil && st.FinishedAt != "" {
		if t, ok := marker.ParseTime(st.FinishedAt); ok {
			end = t
		}
	} else if r.Status != orchestrator.RunRunning && r.Status != runWaiting {
		if t, ok := marker.ParseTime(r.UpdatedAt); ok {
			end = t
		}
	}
	return max(end.Sub(start), 0).Round(time.Second).String()
}

// tabs names the views, the shown one marked.
func (m Model) tabs(f *frame) {
	var b strings.Builder
	for i, name := range viewNames {
		label := fmt.Sprintf(" %d %s ", i+1, name)
		if view(i) == m.view && !m.showHelp {
			b.WriteString(m.styles.tabOn.Render(label))
		} else {
			b.WriteString(m.styles.tab.Render(label))
		}
		b.WriteString(" ")
	}
	f.add(b.String())
}

// statusLine is a question waiting for its answer, or the last action's outcome.
func (m Model) statusLine(f *frame) {
	s := m.styles
	switch {
	case m.confirm != nil:
		f.add(s.warn.Render(m.confirm.question))
	case m.note.err != nil:
		f.add(s.bad.Render("error: " + m.note.err.Error()))
	default:
		f.add(s.dim.Render(m.note.text))
	}
}
