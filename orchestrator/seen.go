package orchestrator

import "github.com/story-automator/story-automator/marker"

// RunInterrupted is how readers show a run whose document says it is
// running while no process holds the project's run lock: its orchestrator
// is gone (killed, crashed, the machine rebooted) and only `run --resume`
// carries it on. It is never written to a state document.
const RunInterrupted = "interrupted"

// ResumeCommand is the one command that carries an interrupted or paused run on.
const ResumeCommand = "story-automator run --resume"

// statusWaiting is a run waiting for an agent's limit to lift: alive, like
// a running one.
const statusWaiting = "waiting"

// SeenStatus is the run's status as a reader should show it: the
// document's own, except that a running (or waiting) run nobody holds the
// lock of is interrupted.
func (s *State) SeenStatus(lockHeld bool) string {
	if (s.Status == RunRunning || s.Status == statusWaiting) && !lockHeld {
		return RunInterrupted
	}
	return s.Status
}

// RecordedTmuxSocket is the tmux socket the project's latest run recorded
// ("" = the default server, or no run): where its child sessions live.
func RecordedTmuxSocket(root string, getenv func(string) string) string {
	path := LatestState(marker.NewStore(root, getenv), root)
	if path == "" {
		return ""
	}
	st, err := LoadState(path)
	if err != nil {
		return ""
	}
	return st.Config.TmuxSocket
}
