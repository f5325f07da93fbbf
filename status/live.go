package status

import "github.com/story-automator/story-automator/tmux/child"

// LiveSessions is this project's child sessions among those listed on the
// tmux server, as the status view shows them.
func LiveSessions(listed []child.Listed) []Session {
	out := []Session{}
	for _, s := range listed {
		if s.Mine {
			out = append(out, Session{Session: s.Pane.Session, Attached: s.Pane.Attached > 0,
				Story: s.State.Story, Step: s.State.Step, Agent: s.State.Agent, Lifecycle: s.State.Lifecycle})
		}
	}
	return out
}
