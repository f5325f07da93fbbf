package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/marker"
)

// markerState is the state document the project's story marker names:
// where the marker says, or the document of the same run in the project's
// runs directory (the project was moved). named reports whether a story
// marker names a document at all; path is "" when that document is gone.
func markerState(store *marker.Store, root string) (path string, named bool) {
	m, err := store.Read()
	if err != nil || m.StateFile == "" || m.IsLoop() {
		return "", false
	}
	for _, p := range []string{m.StateFile, filepath.Join(RunsDir(root), filepath.Base(m.StateFile))} {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", true
}

// runDocuments lists the project's state documents, newest first.
func runDocuments(root string) []string {
	paths, _ := filepath.Glob(filepath.Join(RunsDir(root), "run-*.md"))
	sort.Sort(sort.Reverse(sort.StringSlice(paths)))
	return paths
}

// findResumable is the state document a --resume continues: the marker's
// when there is a story marker, else the newest one neither done nor superseded.
func findResumable(store *marker.Store, root string, l *stateLoader) (string, error) {
	if path, named := markerState(store, root); named {
		if path == "" {
			return "", fmt.Errorf("%w: the marker names a state document that is gone; drop the marker with `story-automator marker remove`",
				ErrNothingToResume)
		}
		return path, nil
	}
	for _, p := range runDocuments(root) {
		if st, err := l.load(p); err == nil && st.resumable() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w in %s: start one with `story-automator run`", ErrNothingToResume, root)
}

// LatestState returns the state document `status` shows: the marker's, else
// the newest in the runs directory ("" when there is none).
func LatestState(store *marker.Store, root string) string {
	if path, _ := markerState(store, root); path != "" {
		return path
	}
	if docs := runDocuments(root); len(docs) > 0 {
		return docs[0]
	}
	return ""
}

// supersedeOld marks every unfinished state document of the project but
// the new run's as superseded, so no --resume ever revives it: a new run
// only starts once the old run's marker is gone, and that run's stories
// are the new run's business now.
func supersedeOld(root, newRunID string, now time.Time, l *stateLoader) error {
	for _, p := range runDocuments(root) {
		st, err := l.load(p)
		if err != nil || st.RunID == newRunID || !st.resumable() {
			continue
		}
		st.Status = RunSuperseded
		st.addLog(now, "", "", "superseded by run "+newRunID+": this run is never resumed")
		if err := SaveState(p, st); err != nil {
			return fmt.Errorf("supersede run %s: %w", st.RunID, err)
		}
	}
	return nil
}

// claimMarker creates the run's marker, or on --resume takes it over: active
// again, owned by this process, with the run's remaining stories.
func claimMarker(ctx context.Context, store *marker.Store, st *State, o Options, c Clock) error {
	now := c.Now()
	owner := agent.AgentSessionID(o.Getenv)
	if err := atomicfile.EnsureDir(store.Dir(), 0o700); err != nil {
		return err
	}
	_, err := store.Update(ctx, func(m *marker.Marker, readErr error) (*marker.Marker, error) {
		switch {
		case errors.Is(readErr, marker.ErrNotFound):
			m = &marker.Marker{Version: marker.SchemaVersion, Mode: marker.ModeStory, CreatedAt: marker.Timestamp(now)}
		case readErr != nil:
			return nil, readErr
		case !o.Resume:
			return nil, fmt.Errorf("%w (marker %s appeared)", ErrRunActive, store.Path)
		case m.IsLoop() && m.Status == marker.StatusActive:
			return nil, fmt.Errorf("%w (a prompt loop holds marker %s)", ErrRunActive, store.Path)
		case m.Status == marker.StatusActive && m.OwnerPid > 0 && m.OwnerPid != o.Pid && otherOwnerAlive(m, o.ProjectRoot):
			return nil, fmt.Errorf("%w (orchestrator pid %d)", ErrRunActive, m.OwnerPid)
		}
		if owner != "" || !o.Resume {
			m.OwnerSession = owner
		}
		// Started from an agent's shell that does not say its session id:
		// the first session to stop claims the run.
		m.ClaimOnStop = m.OwnerSession == "" && agent.InAgentSession(o.Getenv)
		st.Config.OwnerSession = m.OwnerSession
		m.Mode, m.Status, m.PauseReason = marker.ModeStory, marker.StatusActive, ""
		// Config.StateFile is where the document is now (Run sets it on resume).
		m.Epic, m.StateFile, m.OwnerPid = st.Config.Epic, st.Config.StateFile, o.Pid
		m.OwnerPidStart, _ = proc.Start(o.Pid)
		m.OwnerLock = ""
		if o.Pid > 0 {
			m.OwnerLock = RunLockPath(o.ProjectRoot)
		}
		m.ProjectSlug = filepath.Base(o.ProjectRoot)
		m.StoriesRemaining = st.StoriesRemaining()
		m.StopHookBlocks = 0
		// A wait the run was stopped in is the run's again to record.
		m.Waiting = nil
		if u := firstUnfinished(st); u != nil {
			m.Epic, m.CurrentStory = u.Epic, u.Dotted
			if s := u.CurrentStep(); s != nil {
				m.CurrentStep = s.Name
			}
		}
		m.Touch(now)
		return m, nil
	})
	if err != nil {
		return fmt.Errorf("claim marker: %w", err)
	}
	return nil
}

// otherOwnerAlive reports, for a caller that holds the project's run lock,
// whether the marker's owner process is alive. A `run` holds the run lock for
// its whole life, so a marker of this project's runs is dead whatever its
// pid now names; any other owner is judged by its own lock, else by its pid
// and start time.
func otherOwnerAlive(m *marker.Marker, root string) bool {
	if m.OwnerLock != "" && filepath.Clean(m.OwnerLock) == RunLockPath(root) {
		return false
	}
	if m.OwnerLock == "" && filepath.Dir(m.StateFile) == RunsDir(root) {
		return false // written by a `run` before ownerLock was recorded
	}
	return marker.OwnerAlive(m)
}

func firstUnfinished(st *State) *Unit {
	for _, u := range st.Units {
		if u.Status != StatusDone {
			return u
		}
	}
	return nil
}

// settleMarker ends the run's hold on the marker: removed when the run is
// done, paused with the reason otherwise. A marker that is no longer this
// run's (it names another run's state document) is left alone.
func settleMarker(store *marker.Store, runID string, out Outcome, reason string, c Clock) {
	ctx := context.Background()
	unlock, err := store.Lock(ctx)
	if err != nil {
		return
	}
	defer unlock()
	m, err := store.Read()
	if err != nil || !isRunsMarker(m, runID) {
		return
	}
	switch out {
	case OutcomeDone:
		_, _ = store.RemoveLocked()
	case OutcomePaused:
		// Paused by hand already: keep the human's reason.
	default:
		m.Pause(strings.TrimSpace(string(out) + ": " + reason))
		m.Touch(c.Now())
		_ = store.Write(m)
	}
}

// isRunsMarker reports whether the marker belongs to the run: its state
// document, wherever the project now lies, is the run's.
func isRunsMarker(m *marker.Marker, runID string) bool {
	return !m.IsLoop() && strings.TrimSuffix(filepath.Base(m.StateFile), ".md") == runID
}
