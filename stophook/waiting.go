package stophook

import (
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// waitingOn reports whether the marker's run waits out an agent's limit: it
// is alive, without heartbeats, until a little after the wait's end (the
// stale window). A wait whose end is long past is no proof of life.
func waitingOn(m *marker.Marker, env Env, now time.Time) bool {
	if m.Waiting == nil {
		return false
	}
	resumes, ok := marker.ParseTime(m.Waiting.ResumesAt)
	if !ok {
		return false
	}
	grace := env.StaleAfter
	if grace <= 0 {
		grace = DefaultStale
	}
	return now.Before(resumes.Add(grace))
}

// waitingBlockReason tells the owner of a run that waits on a limit that the
// run goes on by itself, when, and the one command that waits for it.
func waitingBlockReason(m *marker.Marker, backgroundTasks bool, now time.Time) string {
	w := m.Waiting
	var b strings.Builder
	who := "The story-automator run"
	if m.OwnerPid > 0 {
		who = fmt.Sprintf("The headless story-automator run (pid %d)", m.OwnerPid)
	}
	resumes, _ := marker.ParseTime(w.ResumesAt)
	left := max(resumes.Sub(now), 0).Round(time.Second)
	fmt.Fprintf(&b, "%s is waiting: the %s agent met a limit (%s), and the run goes on by itself at %s (in %s) with %d stories remaining. "+
		"Nothing needs doing meanwhile: do not start sessions, retry steps or poll tmux. ",
		who, w.Agent, w.Reason, resumes.UTC().Format("2006-01-02 15:04:05 UTC"), left, m.StoriesRemaining)
	if backgroundTasks {
		b.WriteString("Run next, as a background task (Bash run_in_background), then end your turn — you are woken when it returns: " +
			"`story-automator status --wait --return-after 0` (it returns when the run ends, escalates or pauses; a wait is not an end).")
	} else {
		b.WriteString("Run next: `story-automator status --wait` (it blocks while the run works or waits, at most 100s; run it again while it says running or waiting).")
	}
	return b.String()
}
