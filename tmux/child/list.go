package child

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
)

// Listed is one child session on the tmux server (its first pane) and,
// when it belongs to this project (Mine: its name and its state file's
// project root say so), its state, settled when its runner is gone.
type Listed struct {
	Pane  tmux.Pane
	State *sessionstate.State
	Mine  bool
}

// ListSessions lists the tmux server's child sessions once each, sorted by
// name: the one listing session list, session kill-all and status share.
func ListSessions(ctx context.Context, tc *tmux.Client, projectRoot, dir string) ([]Listed, []error, error) {
	panes, err := tc.ListPanes(ctx)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var out []Listed
	var moved []error
	for _, p := range panes {
		if seen[p.Session] || !strings.HasPrefix(p.Session, NamePrefix) || !tmux.ValidName(p.Session) {
			continue
		}
		seen[p.Session] = true
		st, mine, warn := projectSession(projectRoot, dir, p.Session)
		if warn != nil {
			moved = append(moved, warn)
		}
		out = append(out, Listed{Pane: p, State: st, Mine: mine})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pane.Session < out[j].Pane.Session })
	return out, moved, nil
}

// projectSession reports whether a tmux session is this project's and
// returns its state. The name prefix alone cannot tell: a project whose
// directory is named "<slug>-<hash4>" of another shares that project's
// prefix. So the session's state file in this project's sessions directory
// must exist and name this project root; a session without one is never
// counted as this project's (only --all-projects reaches it).
// A corrupt state file is moved aside on the way; err then says so.
func projectSession(projectRoot, dir, name string) (*sessionstate.State, bool, error) {
	if !strings.HasPrefix(name, ProjectPrefix(projectRoot)) {
		return nil, false, nil
	}
	st, err := ReconciledSession(dir, name)
	if err != nil || filepath.Clean(st.ProjectRoot) != filepath.Clean(projectRoot) {
		return nil, false, err
	}
	return st, true, nil
}

// ReconciledSession reads a session's state, settling it as "lost" first when
// it says running but its runner process is gone (a killed runner).
func ReconciledSession(dir, name string) (*sessionstate.State, error) {
	return sessionstate.Reconcile(dir, name, time.Now(), func(pid int) bool { return !proc.Alive(pid) })
}

// Row is the session's line in `session list`'s JSON; the recorded
// lifecycle, agent, story and step only for this project's sessions.
func (l Listed) Row() map[string]any {
	p := l.Pane
	row := map[string]any{"session": p.Session, "paneId": p.PaneID, "panePid": p.PanePid,
		"created": p.Created, "attached": p.Attached > 0, "thisProject": l.Mine}
	if l.Mine {
		row["lifecycle"], row["agent"], row["story"], row["step"] = l.State.Lifecycle, l.State.Agent, l.State.Story, l.State.Step
	}
	return row
}

// KillAll kills the listed sessions, only this project's unless all, and
// returns their names sorted; a session already gone counts as killed.
func KillAll(ctx context.Context, tc *tmux.Client, sessions []Listed, all bool) ([]string, error) {
	killed := []string{}
	for _, s := range sessions {
		if !all && !s.Mine {
			continue
		}
		if err := tc.KillSession(ctx, s.Pane.Session); err != nil && !errors.Is(err, tmux.ErrNoSession) {
			return nil, err
		}
		killed = append(killed, s.Pane.Session)
	}
	sort.Strings(killed)
	return killed, nil
}
