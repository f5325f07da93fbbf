package orchestrator

import (
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/tmux/child"
)

// Finished child sessions leave files in the sessions directory (state,
// spec, prompt, output). A run — and `session spawn` — sweeps those of
// sessions that ended more than a day ago (STORY_AUTOMATOR_SESSION_TTL),
// never a live one, nor one the project's run names as an attempt's.
const (
	// EnvSessionTTL is how long a finished session's files are kept: a Go
	// duration ("24h", "90m"); "0" or "off" keeps them for ever.
	EnvSessionTTL     = "STORY_AUTOMATOR_SESSION_TTL"
	DefaultSessionTTL = 24 * time.Hour
)

// SessionTTL reads EnvSessionTTL; 0 means never sweep.
func SessionTTL(getenv func(string) string) (time.Duration, error) {
	v := ""
	if getenv != nil {
		v = strings.TrimSpace(getenv(EnvSessionTTL))
	}
	switch v {
	case "":
		return DefaultSessionTTL, nil
	case "0", "off":
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: %s=%q: want a duration such as 24h, or 0 to keep finished sessions", ErrConfig, EnvSessionTTL, v)
	}
	return d, nil
}

// NamedSessions reports whether a run's attempts name a session: its
// output file is where an escalation sends the user.
func NamedSessions(st *State) func(name string) bool {
	names := map[string]bool{}
	if st != nil {
		for _, u := range st.Units {
			for _, s := range u.Steps {
				for _, a := range s.Attempts {
					if a.Session != "" {
						names[a.Session] = true
					}
				}
			}
		}
	}
	return func(name string) bool { return names[name] }
}

// sweepSessions sweeps the step runner's finished sessions at the start of
// a run (the run lock held, st the run's state).
func (d Deps) sweepSessions(ttl time.Duration, st *State) {
	if ttl <= 0 {
		return
	}
	for _, name := range d.Steps.SweepSessions(ttl, d.Clock.Now(), NamedSessions(st)) {
		d.Log.Debug().Str("session", name).Msg("swept the files of a session that ended long ago")
	}
}

// SweepFinishedSessions removes the files of the project's child sessions
// (in sessionDir) that ended more than EnvSessionTTL before now, but those
// the project's latest run names, and returns the names swept: what
// `session spawn` does after each spawn. A run whose state cannot be read
// sweeps nothing (which sessions it names is unknown); a bad TTL is
// ErrConfig and sweeps nothing.
func SweepFinishedSessions(root, sessionDir string, getenv func(string) string, now time.Time) ([]string, error) {
	ttl, err := SessionTTL(getenv)
	if err != nil || ttl <= 0 {
		return nil, err
	}
	var run *State
	if path := LatestState(marker.NewStore(root, getenv), root); path != "" {
		if run, err = LoadState(path); err != nil {
			return nil, nil //nolint:nilerr // an unreadable run state protects no session: sweep nothing
		}
	}
	return child.SweepFinished(child.Sweep{Dir: sessionDir, ProjectRoot: root, OlderThan: ttl, Now: now,
		Keep: NamedSessions(run)}), nil
}
