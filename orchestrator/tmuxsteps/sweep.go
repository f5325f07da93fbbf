package tmuxsteps

import (
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/tmux/child"
)

// SweepTemps removes the temps of this project's session files (specs,
// prompts, states), once no session of the run is left running.
func (t *Runner) SweepTemps() []string {
	prefix := child.ProjectPrefix(t.Layout.Root)
	return atomicfile.SweepTemps(t.StateDir, func(name string) bool { return strings.HasPrefix(name, prefix) })
}

// SweepSessions removes the files of this project's sessions that ended
// more than olderThan before now (see child.SweepFinished).
func (t *Runner) SweepSessions(olderThan time.Duration, now time.Time, keep func(name string) bool) []string {
	return child.SweepFinished(child.Sweep{Dir: t.StateDir, ProjectRoot: t.Layout.Root, OlderThan: olderThan, Now: now, Keep: keep})
}
