package dashboard

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/resolve"
	"github.com/story-automator/story-automator/status"
	"github.com/story-automator/story-automator/workflows"
)

// runView is the stories × steps grid over the selected story's attempts.
func (m Model) runView(f *frame, body int) {
	st := m.snap.State
	if st == nil {
		f.add("")
		f.add("No run in this project yet.")
		for _, l := range wrapped("Start one with `story-automator run` (`story-automator run --dry-run` shows its plan first); "+
			"this view follows it as it goes.", m.width) {
			f.add(l)
		}
		return
	}
	rows := m.gridRowsFor(body)
	m.grid(f, st, rows)
	f.add(m.styles.dim.Render(strings.Repeat("─", f.width)))
	m.detail(f, st.Units[m.selected], body-rows-2)
}

// gridRows is how many stories the grid shows at the current size.
func (m Model) gridRows() int { return m.gridRowsFor(m.height - 7) }

// gridRowsFor gives the grid about half of body, more when the detail needs less.
func (m Model) gridRowsFor(body int) int {
	n := 0
	if m.snap.State != nil {
		n = len(m.snap.State.Units)
	}
	return max(1, min(n, body/2))
}

// stepColumns are the steps of the run's units, in their order.
func stepColumns(st *orchestrator.State) []string {
	var cols []string
	seen := map[string]bool{}
	for _, u := range st.Units {
		for _, s := range u.Steps {
			if !seen[s.Name] {
				seen[s.Name] = true
				cols = append(cols, s.Name)
			}
		}
	}
	return cols
}

// grid shows rows stories around the selected one: each step's mark as
// `status` shows it, the story's status and commit.
func (m Model) grid(f *frame, st *orchestrator.State, rows int) {
	cols := stepColumns(st)
	labels := make([]string, len(cols))
	for i, c := range cols {
		labels[i] = c
		if f.width < 100 && len(c) > 3 {
			labels[i] = c[:3]
		}
	}
	storyW := 5
	for _, u := range st.Units {
		storyW = max(storyW, min(textline.Width(u.Dotted), storyCells))
	}
	stepsW := len(strings.Join(labels, " "))
	hostW := hostWidth(st)
	titleW := max(8, f.width-2-storyW-1-stepsW-2-10-8-1-hostW)
	head := fmt.Sprintf("  %-*s %-*s %s  %-10s%s%s", storyW, "story", titleW, "title", strings.Join(labels, " "), "status", hostCell("host", hostW), "commit")
	f.add(m.styles.dim.Render(head))
	first := max(0, min(m.selected-rows/2, len(st.Units)-rows))
	for i := first; i < first+rows && i < len(st.Units); i++ {
		f.add(m.gridRow(st.Units[i], i == m.selected, storyW, titleW, hostW, cols, labels))
	}
}

// storyCells is the most the grid's story column takes: an action unit is
// named by its item's id, which can run long (its title is the action).
const storyCells = 20

// remoteHost is the ssh host a unit runs on, "" for this machine.
func remoteHost(u *orchestrator.Unit) string {
	if u.Host == workflows.LocalHost {
		return ""
	}
	return u.Host
}

// hostWidth is the width of the grid's host column: 0 (no column) while
// every story runs on this machine.
func hostWidth(st *orchestrator.State) int {
	w := 0
	for _, u := range st.Units {
		if h := remoteHost(u); h != "" {
			w = max(w, len(workflows.LocalHost)+1, min(len(h), 12)+1)
		}
	}
	return w
}

// hostCell is a host column's cell: name (blank for a story not yet
// placed) cut to the column, or nothing without one.
func hostCell(name string, w int) string {
	if w == 0 {
		return ""
	}
	return fmt.Sprintf("%-*s", w, textline.Cut(name, w-1))
}

func (m Model) gridRow(u *orchestrator.Unit, selected bool, storyW, titleW, hostW int, cols, labels []string) string {
	marks := make([]string, len(cols))
	for i, c := range cols {
		mark := " "
		for _, s := range u.Steps {
			if s.Name == c {
				mark = status.StepMark(s.Status)
			}
		}
		marks[i] = mark + strings.Repeat(" ", len(labels[i])-1)
	}
	title := ansi.Truncate(u.Title, titleW, "…")
	commit := ""
	if len(u.Commit) >= 7 {
		commit = u.Commit[:7]
	}
	line := fmt.Sprintf("%-*s %-*s %s  %-10s%s%s", storyW, textline.Cut(u.Dotted, storyW), titleW, title, strings.Join(marks, " "), u.Status, hostCell(u.Host, hostW), commit)
	if selected {
		return m.styles.selected.Render("▸ " + line)
	}
	return "  " + line
}

// detail is the selected story's attempts, newest last; a sweep or action
// unit's items; why a story is parked and the keys that settle it; its
// escalation.
func (m Model) detail(f *frame, u *orchestrator.Unit, height int) {
	s := m.styles
	f.add(s.title.Render(u.Dotted+" "+textline.OneLine(u.Title)) + s.dim.Render(" · "+u.Status+hostText(u)+worktreeText(u.Worktree)))
	lines := append(m.retroLines(u), m.parkedLines(u)...)
	lines = append(lines, m.escalationLines(u)...)
	// The items take what is left but the attempts' heading and last row.
	lines = append(fitLines(u.Work.Lines(u.Kind), height-1-len(lines)-2), lines...)
	att := attemptLines(u, f.width >= 100)
	switch room := max(0, height-1-len(lines)); {
	case room == 0:
		att = nil
	case len(att) > room:
		att = append([]string{att[0]}, att[len(att)-room+1:]...)
	}
	for i, l := range att {
		if i == 0 {
			l = s.dim.Render(l)
		}
		f.add(l)
	}
	for _, l := range lines {
		f.add(l)
	}
}

// fitLines is lines cut to n (at least two), the last kept line saying how
// many more `status` lists.
func fitLines(lines []string, n int) []string {
	n = max(n, 2)
	if len(lines) <= n {
		return lines
	}
	return append(lines[:n-1:n-1], fmt.Sprintf("  … and %d more (story-automator status lists them all)", len(lines)-n+1))
}

// wrapped is s wrapped at width, as lines.
func wrapped(s string, width int) []string {
	return strings.Split(ansi.Wrap(s, max(width, 20), ""), "\n")
}

// hostText names the ssh host a story runs on; nothing for this machine.
func hostText(u *orchestrator.Unit) string {
	if h := remoteHost(u); h != "" {
		return " · on " + h
	}
	return ""
}

func worktreeText(w string) string {
	if w == "" {
		return ""
	}
	return " · worktree " + w
}

// retroLines are a retrospective's verdict and, for an epic accepted with
// open items, those items.
func (m Model) retroLines(u *orchestrator.Unit) []string {
	r, s := u.Retro, m.styles
	if r == nil {
		return nil
	}
	verdict := s.good.Render(r.Verdict)
	switch r.Verdict {
	case workflows.VerdictRejected:
		verdict = s.bad.Render(r.Verdict)
	case workflows.VerdictAcceptedOpenItems:
		verdict = s.warn.Render(r.Verdict)
	}
	out := wrapped("Verdict: "+verdict+s.dim.Render(" · "+r.Document), m.width)
	if r.OpenItems() {
		out = append(out, "Open action items:")
		for _, it := range r.ActionItems {
			out = append(out, wrapped("  - "+textline.OneLine(it), m.width)...)
		}
	}
	return out
}

// parkedLines say why a parked unit is parked, what to do, where its work
// is kept and, for a story, the keys that settle it: v resolves it with an
// agent, c confirms it fixed by hand; r then resumes the run.
func (m Model) parkedLines(u *orchestrator.Unit) []string {
	p, s, w := u.Parked, m.styles, m.width
	if p == nil || u.Status != orchestrator.StatusParked {
		return nil
	}
	out := wrapped(s.warn.Render("Parked: ")+textline.OneLine(p.Reason), w)
	out = append(out, wrapped(s.warn.Render("What to do: ")+textline.OneLine(p.Action), w)...)
	resume := s.key.Render("r") + " resumes the run once it has stopped: " + orchestrator.ResumeCommand
	if u.Kind != orchestrator.KindStory {
		out = append(out, wrapped("Once it is settled, "+resume, w)...)
	} else {
		resolveCmd := "story-automator resolve " + u.Dotted
		out = append(out, wrapped("Press "+s.key.Render("v")+" to resolve it with an agent: "+resolveCmd, w)...)
		out = append(out, wrapped("Press "+s.key.Render("c")+" to confirm it once you have fixed it yourself: "+resolveCmd+" --no-interactive", w)...)
		out = append(out, wrapped("Then "+resume, w)...)
	}
	if p.Ref != "" {
		out = append(out, wrapped("Its work is kept at "+p.Ref+shortCommit(p.Commit), w)...)
	}
	return out
}

// shortCommit is " (commit)" shortened, or nothing.
func shortCommit(sha string) string {
	if len(sha) < 7 {
		return ""
	}
	return " (" + sha[:7] + ")"
}

// escalationLines are the run's escalation when it is this story's: what
// happened and the one thing to do.
func (m Model) escalationLines(u *orchestrator.Unit) []string {
	st, s := m.snap.State, m.styles
	if st == nil || st.Escalation == nil || st.Escalation.Unit != u.Dotted {
		return nil
	}
	e, w := st.Escalation, m.width
	out := wrapped(s.bad.Render("Escalated at "+e.Step+": ")+textline.OneLine(e.Reason), w)
	if e.Action != "" {
		out = append(out, wrapped(s.warn.Render("What to do: ")+textline.OneLine(e.Action), w)...)
	}
	switch resolve.Checkpoint(e) {
	case bmad.CodePlanReview:
		return append(out, "Press "+s.key.Render("c")+" to approve the plan ("+orchestrator.ResumeCommand+"), "+
			s.key.Render("n")+" to ask for a new one.")
	case resolve.CodeDoneCheckpoint:
		return append(out, "Press "+s.key.Render("c")+" to continue ("+orchestrator.ResumeCommand+").")
	}
	out = append(out, wrapped("Press "+s.key.Render("v")+" to resolve it with an agent (story-automator resolve "+u.Dotted+"), or fix it yourself and press "+
		s.key.Render("r")+" to resume ("+orchestrator.ResumeCommand+").", w)...)
	return out
}
