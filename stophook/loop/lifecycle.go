package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/story-automator/story-automator/internal/approval"
	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/stophook"
)

// Controller starts, pauses, resumes, cancels and reports one project's
// loop, with its marker store and the process's view of the world
// (environment, clock).
type Controller struct {
	Store  *marker.Store
	Root   string
	Getenv func(string) string
	Now    func() time.Time
}

// Result is what a loop operation reports: the fields of its JSON object.
type Result map[string]any

// Start starts a loop that re-injects prompt, shaped by s.
func (p *Controller) Start(ctx context.Context, prompt string, s Shape) (Result, error) {
	l, warnings, err := s.state(p.Root)
	if err != nil {
		return nil, err
	}
	if err := p.approveAdvisor(l); err != nil {
		return nil, err
	}
	l.Prompt, l.Iteration = prompt, 1
	m := p.newMarker(ctx, l, s.owner("", p.Getenv))
	return p.create(ctx, m, s.Replace, warnings, nil)
}

// approveAdvisor records the loop's advisor, given on this command line, as
// approved by the user (internal/approval): the Stop hook runs no other, so
// a child that rewrites the marker in the project cannot have a command of
// its own run. A session whose sandbox keeps it from the user's state
// folder cannot start a loop with an advisor.
func (p *Controller) approveAdvisor(l *marker.LoopState) error {
	if l.Advisor == "" {
		return nil
	}
	st, err := approval.Open(p.Getenv)
	if err == nil {
		err = st.Approve(l.Advisor)
	}
	if err != nil {
		return fail("approval_failed", "cannot record your approval of the advisor, so the Stop hook would never run it: %v", err).
			WithAction("start the loop from your own terminal (a sandboxed agent session cannot write your state folder), with HOME or XDG_STATE_HOME set and writable")
	}
	return nil
}

// newMarker builds an active loop marker owned by owner, with the git
// fingerprint the hook will compare against for progress.
func (p *Controller) newMarker(ctx context.Context, l *marker.LoopState, owner string) *marker.Marker {
	now := marker.Timestamp(p.Now())
	if l.StartedAt == "" {
		l.StartedAt = now
	}
	l.GitFingerprint = stophook.GitFingerprint(ctx, p.Root, stophook.StrategyNeedsWorkTree(l.ExitStrategy))
	return &marker.Marker{
		Version: marker.SchemaVersion, Mode: marker.ModeLoop, Status: marker.StatusActive,
		OwnerSession: owner, CreatedAt: now, Heartbeat: now, StopHookSeenHeartbeat: now, Loop: l,
	}
}

// create writes m unless an active or paused run or loop is in the way
// (replace replaces it), and reports the result.
func (p *Controller) create(ctx context.Context, m *marker.Marker, replace bool, warnings []string, extra Result) (Result, error) {
	st := p.Store
	if err := atomicfile.EnsureDir(st.Dir(), 0o700); err != nil {
		return nil, fail("marker_io", "%v", err)
	}
	var replaced *marker.Marker
	_, err := st.Update(ctx, func(cur *marker.Marker, readErr error) (*marker.Marker, error) {
		if err := refuseOver(cur, readErr, replace); err != nil {
			return nil, err
		}
		replaced = cur
		return m, nil
	})
	if err != nil {
		return nil, err
	}
	if m.OwnerSession == "" {
		warnings = append(warnings, "no owner session: the loop holds every session in this project; pass --owner-session or start it from inside the agent session")
	}
	if m.Loop.GitFingerprint == "" && stophook.StrategyNeedsWorkTree(m.Loop.ExitStrategy) {
		warnings = append(warnings, "not a git repository: circuit_breaker sees only heartbeats, so it opens after 3 iterations")
	}
	if w := BlockCapWarning(m.Loop.MaxIterations, p.Getenv); w != "" {
		warnings = append(warnings, w)
	}
	out := Result{"path": st.Path, "marker": m, "historyFile": p.historyFile(), "replaced": replaced != nil}
	if len(warnings) > 0 {
		out["warnings"] = warnings
	}
	for k, v := range extra {
		out[k] = v
	}
	return out, nil
}

func (p *Controller) historyFile() string { return p.Store.HistoryPath() }

// refuseOver says why a new loop may not replace cur (read with readErr).
func refuseOver(cur *marker.Marker, readErr error, replace bool) error {
	if replace {
		return nil
	}
	if errors.Is(readErr, marker.ErrCorrupt) {
		return fail("marker_corrupt", "%v (use --replace to overwrite it)", readErr)
	}
	if cur == nil {
		return nil
	}
	live := cur.Status == marker.StatusActive || cur.Status == marker.StatusPaused
	switch {
	case cur.Mode == marker.ModeLoop && live:
		return fail("loop_active", "a loop is already running here (%s, iteration %d); cancel it with `story-automator loop cancel` or pass --replace", cur.Status, iteration(cur))
	case cur.Mode != marker.ModeLoop && live && cur.StoriesRemaining > 0:
		return fail("story_run_active", "a story run owns this project (%s, %d stories remaining); pass --replace to replace it", cur.Status, cur.StoriesRemaining)
	}
	return nil
}

func iteration(m *marker.Marker) int {
	if m.Loop == nil {
		return 0
	}
	return m.Loop.Iteration
}

// Status reports the project's marker as a loop.
func (p *Controller) Status() (Result, error) {
	st := p.Store
	m, err := st.Read()
	if errors.Is(err, marker.ErrNotFound) {
		return Result{"exists": false, "active": false, "path": st.Path}, nil
	}
	if err != nil {
		return nil, err
	}
	out := Result{"exists": true, "active": m.IsLoop() && m.Active(), "path": st.Path, "mode": m.Mode,
		"status": m.Status, "ownerSession": m.OwnerSession, "loop": m.Loop, "stopHookBlocks": m.StopHookBlocks,
		"historyFile": p.historyFile()}
	if m.LastDecision != nil {
		out["lastDecision"] = m.LastDecision
	}
	if m.PauseReason != "" {
		out["pauseReason"] = m.PauseReason
	}
	return out, nil
}

// Pause makes the Stop hook let every stop through until Resume.
func (p *Controller) Pause(ctx context.Context, reason string) (Result, error) {
	if reason == "" {
		reason = "paused with `story-automator loop pause`"
	}
	return p.modify(ctx, func(m *marker.Marker) { m.Pause(reason) })
}

// Resume makes a paused loop run again with fresh counters; maxIterations > 0
// also sets a new iteration limit (it must be 1..ceiling when set).
func (p *Controller) Resume(ctx context.Context, maxIterations int, set bool) (Result, error) {
	if set && (maxIterations < 1 || maxIterations > marker.MaxIterationsCeiling) {
		return nil, usage("--max-iterations must be 1..%d, got %d", marker.MaxIterationsCeiling, maxIterations)
	}
	now := p.Now()
	return p.modify(ctx, func(m *marker.Marker) {
		m.Resume()
		m.Loop.NoProgressIterations = 0
		// A fresh heartbeat: the pause is not a sign of a dead loop.
		m.Touch(now)
		if set {
			m.Loop.MaxIterations = maxIterations
		}
	})
}

// modify changes the loop under the lock; a missing or story-mode marker is refused.
func (p *Controller) modify(ctx context.Context, fn func(m *marker.Marker)) (Result, error) {
	st := p.Store
	if err := requireDir(st); err != nil {
		return nil, err
	}
	m, err := st.Update(ctx, func(m *marker.Marker, readErr error) (*marker.Marker, error) {
		if err := requireLoop(m, readErr); err != nil {
			return nil, err
		}
		fn(m)
		return m, nil
	})
	if err != nil {
		return nil, err
	}
	return Result{"path": st.Path, "marker": m}, nil
}

// Cancel ends the loop and removes its marker.
func (p *Controller) Cancel(ctx context.Context) (Result, error) {
	st := p.Store
	if err := requireDir(st); err != nil {
		return nil, err
	}
	unlock, err := st.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, readErr := st.Read()
	if err := requireLoop(m, readErr); err != nil {
		return nil, err
	}
	if _, err := st.RemoveLocked(); err != nil {
		return nil, err
	}
	return Result{"path": st.Path, "removed": true, "iteration": m.Loop.Iteration, "maxIterations": m.Loop.MaxIterations}, nil
}

// requireDir refuses early when the marker's directory does not exist (no
// loop was ever started), rather than creating a lock file there.
func requireDir(st *marker.Store) error {
	if _, err := os.Lstat(st.Dir()); errors.Is(err, os.ErrNotExist) {
		return fail("loop_not_found", "no loop is running in this project")
	}
	return nil
}

func requireLoop(m *marker.Marker, readErr error) error {
	switch {
	case errors.Is(readErr, marker.ErrNotFound):
		return fail("loop_not_found", "no loop is running in this project")
	case readErr != nil:
		return readErr
	case !m.IsLoop():
		return fail("not_a_loop", "the marker belongs to a %s run, not a loop; use `story-automator marker …` for it", m.Mode)
	}
	return nil
}

// Import takes over a Ralph or Forge loop from its state file at path
// (relative to the project root) and, unless keepSource, renames the file out
// of the old hook's sight so the two hooks never drive the same loop.
func (p *Controller) Import(ctx context.Context, path string, s Shape, keepSource bool) (Result, error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.Root, path)
	}
	data, err := ReadFile(nil, path)
	if err != nil {
		return nil, fail("import_unreadable", "%v", err)
	}
	src, err := stophook.ParseLoopFile(path, data)
	if err != nil {
		return nil, fail("import_invalid", "%v", err)
	}
	l, warnings, err := s.state(p.Root)
	if err != nil {
		return nil, err
	}
	if err := p.approveAdvisor(l); err != nil {
		return nil, err
	}
	warnings = append(warnings, importLimits(src, s, l)...)
	l.Prompt, l.Iteration, l.StartedAt, l.ImportedFrom = src.Prompt, max(src.Iteration, 1), src.StartedAt, path
	if !s.CompletionPromiseSet {
		l.CompletionPromise = src.CompletionPromise
	}
	m := p.newMarker(ctx, l, s.owner(src.OwnerSession, p.Getenv))
	if src.Active != "true" {
		m.Pause(fmt.Sprintf("imported %s loop was %s", src.Format, src.Active))
	}
	extra := Result{"importedFrom": path, "format": src.Format}
	if keepSource {
		return p.create(ctx, m, s.Replace, warnings, extra)
	}
	// Check before the source is touched that a loop may be created.
	cur, readErr := p.Store.Read()
	if err := refuseOver(cur, readErr, s.Replace); err != nil {
		return nil, err
	}
	retired := path + ".imported"
	if err := os.Rename(path, retired); err != nil {
		return nil, fail("import_retire", "cannot rename %s out of the old hook's way: %v (pass --keep-source to leave it)", path, err)
	}
	extra["sourceRenamedTo"] = retired
	out, err := p.create(ctx, m, s.Replace, warnings, extra)
	if err != nil {
		_ = os.Rename(retired, path) // the import failed: give the old loop back
	}
	return out, err
}

// importLimits sets the imported loop's iteration limit: the flag, else the
// file's (capped at the ceiling), else the default; never unlimited.
func importLimits(src stophook.ImportedLoop, s Shape, l *marker.LoopState) []string {
	switch {
	case s.MaxIterationsSet:
		return nil
	case src.MaxIterations == 0:
		return []string{fmt.Sprintf("the source loop had no iteration limit; this one stops at %d (use --max-iterations to change it)", l.MaxIterations)}
	case src.MaxIterations > marker.MaxIterationsCeiling:
		l.MaxIterations = marker.MaxIterationsCeiling
		return []string{fmt.Sprintf("max_iterations %d is above the ceiling; capped at %d", src.MaxIterations, marker.MaxIterationsCeiling)}
	}
	l.MaxIterations = src.MaxIterations
	return nil
}
