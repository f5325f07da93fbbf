package status

import (
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

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

// RemoteSessions are the run's working children on ssh hosts, as its state
// records them: they live in the host's tmux, which this machine's does
// not list. A run that is not running has none working.
func RemoteSessions(st *orchestrator.State) []Session {
	if st == nil || st.Status != orchestrator.RunRunning {
		return nil
	}
	var out []Session
	for _, u := range st.Units {
		if u.Host == "" || u.Host == workflows.LocalHost {
			continue
		}
		for _, s := range u.Steps {
			n := len(s.Attempts)
			if n == 0 || s.Status != orchestrator.StatusRunning {
				continue
			}
			if a := s.Attempts[n-1]; a.Session != "" && a.FinalState == "" {
				out = append(out, Session{Session: a.Session, Story: u.Key, Step: s.Name, Agent: a.Agent,
					Lifecycle: "running", Host: u.Host})
			}
		}
	}
	return out
}
