package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/marker"
)

// findResumable is the state document a --resume continues: the marker's,
// else the newest unfinished one in the project's runs directory.
func findResumable(store *marker.Store, root string) (string, error) {
	if m, err := store.Read(); err == nil && m.StateFile != "" && !m.IsLoop() {
		if _, err := os.Stat(m.StateFile); err == nil {
			return m.StateFile, nil
		}
	}
	paths, _ := filepath.Glob(filepath.Join(RunsDir(root), "run-*.md"))
	sort.Sort(sort.Reverse(sort.StringSlice(paths)))
	for _, p := range paths {
		if st, err := LoadState(p); err == nil && st.Status != RunDone {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w in %s: start one with `story-automator run`", ErrNothingToResume, root)
}

// LatestState returns the state document `status` shows: the marker's, else
// the newest in the runs directory ("" when there is none).
func LatestState(store *marker.Store, root string) string {
	if m, err := store.Read(); err == nil && m.StateFile != "" {
		if _, err := os.Stat(m.StateFile); err == nil {
			return m.StateFile
		}
	}
	paths, _ := filepath.Glob(filepath.Join(RunsDir(root), "run-*.md"))
	if len(paths) == 0 {
		return ""
	}
	sort.Strings(paths)
	return paths[len(paths)-1]
}

// claimMarker creates the run's marker, or on --resume takes it over: active
// again, owned by this process, with the run's remaining stories.
func claimMarker(ctx context.Context, store *marker.Store, st *State, o Options, c Clock) error {
	now := c.Now()
	owner := marker.OwnerFromEnv(o.Getenv)
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
		case m.Status == marker.StatusActive && m.OwnerPid > 0 && m.OwnerPid != o.Pid && marker.ProcessAlive(m.OwnerPid):
			return nil, fmt.Errorf("%w (orchestrator pid %d)", ErrRunActive, m.OwnerPid)
		}
		if owner != "" || !o.Resume {
			m.OwnerSession = owner
		}
		st.Config.OwnerSession = m.OwnerSession
		m.Mode, m.Status, m.PauseReason = marker.ModeStory, marker.StatusActive, ""
		m.Epic, m.StateFile, m.OwnerPid = st.Config.Epic, st.Config.StateFile, o.Pid
		m.ProjectSlug = filepath.Base(o.ProjectRoot)
		m.StoriesRemaining = st.StoriesRemaining()
		m.StopHookBlocks = 0
		if u := firstUnfinished(st); u != nil {
			m.CurrentStory = u.Dotted
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
// run's is left alone.
func settleMarker(store *marker.Store, statePath string, out Outcome, reason string, c Clock) {
	ctx := context.Background()
	unlock, err := store.Lock(ctx)
	if err != nil {
		return
	}
	defer unlock()
	m, err := store.Read()
	if err != nil || m.StateFile != statePath {
		return
	}
	switch out {
	case OutcomeDone:
		_, _ = store.RemoveLocked()
	case OutcomePaused:
		// Paused by hand already: keep the human's reason.
	default:
		m.Status = marker.StatusPaused
		m.PauseReason = strings.TrimSpace(string(out) + ": " + reason)
		m.Touch(c.Now())
		_ = store.Write(m)
	}
}
