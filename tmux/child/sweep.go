package child

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/filelock"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

// Sweep says which finished sessions SweepFinished removes.
type Sweep struct {
	// Dir is the sessions directory; ProjectRoot the project whose
	// sessions (by name prefix and recorded root) are swept.
	Dir, ProjectRoot string
	// OlderThan is how long ago a session must have ended.
	OlderThan time.Duration
	Now       time.Time
	// Keep, when set, spares sessions a run still names (its attempts' output).
	Keep func(name string) bool
}

// finalLifecycles are the states a session never leaves.
var finalLifecycles = []string{sessionstate.LifecycleExited, sessionstate.LifecycleLost, LifecycleKilled}

// SweepFinished removes the files (state, lock, spec, prompt, output) of
// the project's sessions that ended more than OlderThan ago, and returns
// the names swept. A session is only swept when its state says it ended
// (exited, lost or killed) and none of its recorded processes is alive, read
// again under its state file's lock: a live session — starting, running, or
// with a corrupt or unreadable state — is never touched.
func SweepFinished(s Sweep) []string {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil
	}
	prefix := ProjectPrefix(s.ProjectRoot)
	var swept []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !strings.HasPrefix(name, prefix) || !sessionstate.ValidName(name) {
			continue // also every "<name>.spec.json": its name has a dot
		}
		if (s.Keep != nil && s.Keep(name)) || !s.finished(name) {
			continue
		}
		if s.sweepOne(name) {
			swept = append(swept, name)
		}
	}
	return swept
}

// finished reports whether the session ended more than OlderThan ago.
func (s Sweep) finished(name string) bool {
	st, err := sessionstate.Read(s.Dir, name)
	if err != nil || !finalLifecycle(st.Lifecycle) || proc.Alive(st.PanePid) || proc.Alive(st.AgentPid) {
		return false
	}
	if st.ProjectRoot != "" && filepath.Clean(st.ProjectRoot) != filepath.Clean(s.ProjectRoot) {
		return false
	}
	ended, ok := marker.ParseTime(st.ExitedAt)
	if !ok {
		fi, err := os.Stat(sessionstate.StatePath(s.Dir, name))
		if err != nil {
			return false
		}
		ended = fi.ModTime()
	}
	return s.Now.Sub(ended) > s.OlderThan
}

// sweepOne removes one session's files under its state lock, once it has
// checked again that the session is finished.
func (s Sweep) sweepOne(name string) bool {
	lock := sessionstate.StatePath(s.Dir, name) + ".lock"
	release, err := filelock.Acquire(context.Background(), lock, time.Second)
	if err != nil {
		return false
	}
	defer release()
	if !s.finished(name) {
		return false
	}
	for _, p := range []string{SpecPath(s.Dir, name), PromptPath(s.Dir, name), sessionstate.OutputPath(s.Dir, name),
		sessionstate.StatePath(s.Dir, name), NetworkLogPath(s.Dir, name), lock} {
		_ = os.Remove(p)
	}
	removeSandboxFiles(s.Dir, name)
	return true
}

func finalLifecycle(l string) bool {
	for _, f := range finalLifecycles {
		if l == f {
			return true
		}
	}
	return false
}
