package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/remotesession"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/status"
	"github.com/story-automator/story-automator/stophook"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

// Snapshot is everything the dashboard shows, read at one moment from the
// files `status` reads.
type Snapshot struct {
	Status status.View
	// State is the latest run's whole record (attempts), nil when none.
	State *orchestrator.State
	Runs  []orchestrator.RunSummary
	// Hook is the Stop hook's last decisions, oldest first.
	Hook []stophook.HistoryEntry
	// Waiting is set while the run waits for a limit to lift.
	Waiting *Waiting
	// Socket is the tmux server (-L) the run's sessions live on.
	Socket string
	// Remote is where each of the run's working children on an ssh host
	// is (they are among Status.Sessions too).
	Remote map[string]remotesession.Where
	// Deferred is the project's open deferred items, as `deferred` lists
	// them; DeferredPath is deferred-work.md, DeferredError why it cannot
	// be read ("" when it can, or when there is no BMAD project).
	Deferred                    []workflows.DeferredEntry
	DeferredPath, DeferredError string
	// BoardPath is the board (sprint-status.yaml) whose open action items
	// Status.ActionItems are, as `status` lists them; BoardError why it
	// cannot be read ("" when it can, or when there is no BMAD project).
	BoardPath, BoardError string
}

// Waiting is a run waiting on its own (an agent's usage limit) and when it
// goes on; Until is zero when nobody knows.
type Waiting struct {
	Reason string
	Until  time.Time
}

// runWaiting is the status a run has while it waits for a limit to lift.
const runWaiting = "waiting"

// waitingOf is a waiting run's wait: why, and when it goes on, as its
// marker's "waiting" object says (reason, agent, resumesAt) — read from the
// marker's JSON, so that it is found whether this build knows the field or
// keeps it among the marker's unknown ones.
// A run whose document says waiting while its orchestrator is gone (seen,
// the status a reader shows, is interrupted) waits for nobody: nil.
func waitingOf(seen *status.Run, st *orchestrator.State, m *marker.Marker) *Waiting {
	if st == nil || st.Status != runWaiting || seen == nil || seen.Status != runWaiting {
		return nil
	}
	w := &Waiting{Reason: st.PauseReason}
	var doc struct {
		Waiting *struct{ Reason, Agent, ResumesAt string } `json:"waiting"`
	}
	if m == nil {
		return w
	}
	if data, err := json.Marshal(m); err != nil || json.Unmarshal(data, &doc) != nil || doc.Waiting == nil {
		return w
	}
	if r := doc.Waiting.Reason; r != "" {
		w.Reason = r
		if doc.Waiting.Agent != "" {
			w.Reason += " (" + doc.Waiting.Agent + ")"
		}
	}
	w.Until, _ = time.Parse(time.RFC3339, doc.Waiting.ResumesAt)
	return w
}

// Source reads a project's snapshots.
type Source struct {
	Root   string
	Getenv func(string) string
	// Socket is the tmux socket given (--tmux-socket); "" = the one the
	// project's latest run recorded, else the default server.
	Socket string
	Now    func() time.Time
	// Hosts reads the screens of children on ssh hosts, over one kept
	// connection per host (nil: they are listed, not shown).
	Hosts *remotesession.Pool
}

// hookHistoryKept is how many of the Stop hook's decisions the loops view keeps.
const hookHistoryKept = 200

// Load reads a snapshot; what cannot be read is left empty.
func (s Source) Load(ctx context.Context) Snapshot {
	var snap Snapshot
	none := func() ([]status.Session, []string) { return []status.Session{}, nil }
	snap.Status, snap.State = status.Gather(s.Root, s.Getenv, s.Now, io.Discard, none)
	snap.Socket = s.Socket
	loaded := map[string]*orchestrator.State{}
	if st := snap.State; st != nil {
		loaded[snap.Status.Run.StateFile] = st
		if snap.Socket == "" {
			snap.Socket = st.Config.TmuxSocket
		}
	}
	snap.Status.Sessions = s.liveSessions(ctx, snap.Socket)
	snap.Remote = remoteSessions(&snap)
	snap.Runs = orchestrator.HistoryWith(s.Root, loaded)
	snap.Hook = readHook(marker.NewStore(s.Root, s.Getenv).HistoryPath(), hookHistoryKept)
	snap.Waiting = waitingOf(snap.Status.Run, snap.State, snap.Status.Marker.Marker)
	snap.deferred(s.Root)
	snap.actionItems(s.Root)
	return snap
}

// deferred reads the open deferred items with the `deferred` command's own
// function; a project without a BMAD layout has none.
func (snap *Snapshot) deferred(root string) {
	w, open, err := status.OpenDeferred(root, 0)
	snap.Deferred, snap.DeferredPath = open, w.Path
	switch {
	case errors.Is(err, workflows.ErrLayoutNotFound):
	case err != nil:
		snap.DeferredError = err.Error()
	}
}

// actionItems reads the board's open action items with `status`'s own
// function, keeping why the board cannot be read (status leaves that out).
func (snap *Snapshot) actionItems(root string) {
	board, items, err := status.OpenActionItems(root)
	snap.BoardPath, snap.Status.ActionItems = board, items
	switch {
	case errors.Is(err, workflows.ErrLayoutNotFound):
	case err != nil:
		snap.BoardError = err.Error()
	}
}

// liveSessions is the project's child sessions on the run's tmux server.
func (s Source) liveSessions(ctx context.Context, socket string) []status.Session {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	sessions, _, err := child.Sessions{Tmux: tmux.New(socket), Root: s.Root, Dir: sessionstate.Dir(s.Root, s.Getenv)}.List(ctx)
	if err != nil {
		return []status.Session{}
	}
	return status.LiveSessions(sessions)
}

// remoteSessions adds to snap's live sessions the run's working children
// on ssh hosts, as its state records them (their tmux is the host's), and
// says where each is.
func remoteSessions(snap *Snapshot) map[string]remotesession.Where {
	remote := status.RemoteSessions(snap.State)
	if len(remote) == 0 {
		return nil
	}
	out := map[string]remotesession.Where{}
	for _, s := range remote {
		out[s.Session] = remotesession.Where{Host: s.Host, Run: snap.State.RunID, Story: s.Story}
	}
	snap.Status.Sessions = append(snap.Status.Sessions, remote...)
	return out
}

// Watch wakes on every change to what a snapshot reads: the runs' state
// documents, the marker, the hook's history, deferred-work.md and the
// board, and the run's process
// ending (whose lock the kernel drops without touching a file).
func (s Source) Watch(snap Snapshot) *wake.Waker {
	w := wake.New()
	for _, dir := range []string{orchestrator.RunsDir(s.Root), filepath.Dir(marker.NewStore(s.Root, s.Getenv).Path),
		filepath.Join(s.Root, orchestrator.StateDirName)} {
		_ = w.Dir(dir) // a missing one is skipped: it is made with the first run
	}
	for _, file := range []string{snap.DeferredPath, snap.BoardPath} {
		if file != "" {
			_ = w.Dir(filepath.Dir(file), filepath.Base(file))
		}
	}
	if m := snap.Status.Marker.Marker; m != nil && snap.Status.Orchestrator.Alive {
		_ = w.Process(m.OwnerPid)
	}
	return w
}

// readHook is the last n entries of the Stop hook's history file.
func readHook(path string, n int) []stophook.HistoryEntry {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []stophook.HistoryEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var e stophook.HistoryEntry
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Decision != "" {
			out = append(out, e)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
