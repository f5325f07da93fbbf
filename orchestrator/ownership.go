package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"slices"
)

// Which changed paths go into a story's commit. The stories of a run share
// one working tree, so the run fingerprints the tree's changes before and
// after every attempt and notes on the unit the paths that changed while
// its session ran (Unit.Paths). At a unit's commit a changed path goes in when
//
//   - it is the unit's own story file (another story's story file never);
//   - the unit's story File List names it and its sessions changed it;
//   - its sessions changed it, no attempt running now has changed it since
//     that attempt started, and no session of another story not yet
//     committed changed it while that story's File List names it;
//   - no session of a story not yet committed changed it (a human's fix
//     before --resume, an attempt cut off by a crash) and no attempt running
//     now has changed it since that attempt started.
//
// Attempts of parallel stories overlap, so a unit's sessions are said to
// have changed every path that changed while they ran, also another story's
// file written by that story's attempt still running. Such a path is left to
// the running attempt (its unit claims it when the attempt ends) unless this
// unit's File List names it: a commit never takes, unlisted, a file an agent
// of another story may still be writing. When sessions of several stories
// changed a path and no File List tells them apart, the first of them to
// commit takes it. sprint-status.yaml is none of this: every commit records
// its own unit's entries of it (and its epic's), whoever changed them (see
// statusForCommit).
//
// Only the changed paths are looked at, and only the File Lists of the
// stories that claim one of them are read, so the cost of a commit follows
// the size of the change, not of the backlog.
type ownership struct {
	self   string
	status string
	// storyFile returns the story (of this run) whose story file path is.
	storyFile func(path string) (string, bool)
	// listedBy reports whether story key's File List names path.
	listedBy func(key, path string) bool
	claims   map[string][]string // path → the uncommitted units whose sessions changed it
	inflight []Snapshot          // the snapshots taken when the running attempts started
}

// owns reports whether the unit's commit takes path, whose fingerprint is now fp.
func (o ownership) owns(path, fp string) bool {
	if path == o.status {
		return false
	}
	if owner, ok := o.storyFile(path); ok {
		return owner == o.self
	}
	claimants := o.claims[path]
	mine := slices.Contains(claimants, o.self)
	if mine && o.listedBy(o.self, path) {
		return true
	}
	for _, before := range o.inflight {
		if before[path] != fp {
			return false // an attempt running now changed it: that attempt's unit claims it when it ends
		}
	}
	if !mine {
		return len(claimants) == 0
	}
	for _, k := range claimants {
		if k != o.self && o.listedBy(k, path) {
			return false
		}
	}
	return true
}

// commitContent fills in what unit u's commit takes: its changed paths
// and its entries of sprint-status.yaml.
func (e *Engine) commitContent(ctx context.Context, u *Unit, req *CommitRequest) error {
	snap, err := e.Git.Snapshot(ctx)
	if err != nil {
		return err
	}
	req.Paths = e.commitPaths(u, snap)
	req.Changed = snap
	status := e.Backlog.StatusFile()
	if _, changed := snap[status]; status == "" || !changed {
		return nil
	}
	committed, ok, err := e.Git.CommittedFile(ctx, status)
	if err != nil {
		return err
	}
	if !ok {
		committed = nil
	}
	data, err := e.Backlog.StatusForCommit(committed, u.Key, u.Epic, u.Kind == KindRetro)
	if err != nil {
		return err
	}
	if !ok || !bytes.Equal(data, committed) {
		req.Contents = map[string][]byte{status: data}
	}
	return nil
}

// commitPaths lists the changed paths of snap that go into unit u's commit.
func (e *Engine) commitPaths(u *Unit, snap Snapshot) []string {
	o := ownership{self: u.Key, status: e.Backlog.StatusFile(), claims: map[string][]string{}}
	stories := map[string]bool{}
	e.mu.Lock()
	for _, x := range e.state.Units {
		if x.Kind == KindStory {
			stories[x.Key] = true
		}
		if x.Status == StatusDone && x != u {
			continue
		}
		for _, p := range x.Paths {
			o.claims[p] = append(o.claims[p], x.Key)
		}
	}
	for _, before := range e.inflight {
		o.inflight = append(o.inflight, before)
	}
	e.mu.Unlock()
	o.storyFile = func(path string) (string, bool) {
		key, ok := e.Backlog.StoryFileOwner(path)
		return key, ok && stories[key]
	}
	lists := map[string][]string{}
	o.listedBy = func(key, path string) bool {
		list, ok := lists[key]
		if !ok {
			list = e.Backlog.FileList(key) // a story the project no longer knows lists nothing
			lists[key] = list
		}
		return slices.Contains(list, path)
	}
	var out []string
	for _, p := range snap.Paths() {
		if o.owns(p, snap[p]) {
			out = append(out, p)
		}
	}
	return out
}

// beginAttempt fingerprints the tree before an attempt and registers the
// attempt as running; ok is false when the tree could not be read (the
// attempt's changes then stay unclaimed).
//
// When the previous attempt ended with no other attempt running, and the run
// has neither started an attempt nor written to the tree since, its closing
// snapshot is this one's opening snapshot: a story's steps follow each other
// with one `git status` between them, not two. (An edit a human makes in that
// instant counts as made during the new attempt, as one a moment later would.)
func (e *Engine) beginAttempt(ctx context.Context) (id int, before Snapshot, ok bool) {
	e.mu.Lock()
	if before = e.idle; before != nil && len(e.inflight) == 0 {
		e.idle = nil
		id = e.registerAttempt(before)
		e.mu.Unlock()
		return id, before, true
	}
	e.treeEvents++ // an attempt starts: a snapshot being taken now is stale
	e.mu.Unlock()
	before, err := e.Git.Snapshot(ctx)
	if err != nil {
		e.Log.Warn().Err(err).Msg("cannot list the project's changes before an attempt")
		return 0, nil, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.registerAttempt(before), before, true
}

// registerAttempt records a running attempt's opening snapshot (e.mu held).
func (e *Engine) registerAttempt(before Snapshot) int {
	e.nextAttempt++
	e.treeEvents++
	e.idle = nil
	if e.inflight == nil {
		e.inflight = map[int]Snapshot{}
	}
	e.inflight[e.nextAttempt] = before
	return e.nextAttempt
}

// errGitTampered: the project was not looked at after an attempt that
// changed the repository's config or hooks (the step escalates).
var errGitTampered = errors.New("the attempt changed the repository's config or hooks")

// endAttempt claims for u the paths that changed while its attempt ran and
// unregisters the attempt, in one step, so a path is always either claimed
// or still covered by the running attempt (look false: the attempt changed
// the repository's config or hooks, so no git command looks at the project
// and nothing is claimed). Its snapshot is kept for the next
// attempt when it was taken with no other attempt running and no write to
// the tree by the run (see beginAttempt).
func (e *Engine) endAttempt(ctx context.Context, u *Unit, id int, before Snapshot, look bool) {
	e.mu.Lock()
	alone, events := len(e.inflight) == 1, e.treeEvents
	e.mu.Unlock()
	var after Snapshot
	err := errGitTampered
	if look {
		if after, err = e.Git.Snapshot(context.WithoutCancel(ctx)); err != nil {
			e.Log.Warn().Err(err).Msg("cannot list the project's changes after an attempt")
		}
	}
	e.updateUnit(u, func(*State) {
		delete(e.inflight, id)
		if err == nil {
			u.Paths = mergePaths(u.Paths, Changed(before, after))
			if alone && events == e.treeEvents {
				e.idle = after
			}
		}
	})
}

// treeWritten forgets the idle snapshot: the run is about to change the
// project's files itself (a story's done status, its commit, a landing).
func (e *Engine) treeWritten() {
	e.mu.Lock()
	e.idle = nil
	e.treeEvents++
	e.mu.Unlock()
}

// mergePaths is the sorted union of two path lists.
func mergePaths(a, b []string) []string {
	out := slices.Clone(a)
	for _, p := range b {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
