package dashboard

import "charm.land/lipgloss/v2"

// styles are the dashboard's looks; without colour (NO_COLOR) only bold and
// reverse video remain, so the selection and the headings still show.
type styles struct {
	title, dim, tab, tabOn, selected, warn, bad, good, key lipgloss.Style
	state                                                  map[string]lipgloss.Style
}

func newStyles(color bool) styles {
	plain := lipgloss.NewStyle()
	s := styles{title: plain.Bold(true), dim: plain, tab: plain, tabOn: plain.Bold(true).Reverse(true),
		selected: plain.Reverse(true), warn: plain.Bold(true), bad: plain.Bold(true), good: plain, key: plain.Bold(true)}
	if color {
		s.dim = plain.Foreground(lipgloss.Color("8"))
		s.tab = plain.Foreground(lipgloss.Color("7"))
		s.tabOn = plain.Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("6"))
		s.warn = plain.Bold(true).Foreground(lipgloss.Color("3"))
		s.bad = plain.Bold(true).Foreground(lipgloss.Color("1"))
		s.good = plain.Foreground(lipgloss.Color("2"))
		s.key = plain.Bold(true).Foreground(lipgloss.Color("6"))
	}
	s.state = map[string]lipgloss.Style{"running": s.good.Bold(true), "done": s.good.Bold(true), "waiting": s.warn,
		"paused": s.warn, "escalated": s.bad, "interrupted": s.bad, runDoneWithParked: s.warn}
	return s
}

// stateStyle is how a run's state word looks.
func (s styles) stateStyle(state string) lipgloss.Style {
	if st, ok := s.state[state]; ok {
		return st
	}
	return s.title
}
