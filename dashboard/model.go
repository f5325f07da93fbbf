package dashboard

import (
	"context"
	"errors"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/resolve"
	"github.com/story-automator/story-automator/tmux"
)

// view is one of the dashboard's screens.
type view int

const (
	viewRun view = iota
	viewLive
	viewRuns
	viewLoops
	viewDeferred
	viewActions
	viewCount
)

var viewNames = [viewCount]string{"Run", "Live", "Runs", "Loops", "Deferred", "Actions"}

// Model is the dashboard: a snapshot of the project and what the user is
// looking at. It changes nothing on its own; only keys act.
type Model struct {
	src      Source
	ctl      Controls
	snap     Snapshot
	loaded   bool
	now      time.Time
	width    int
	height   int
	view     view
	showHelp bool
	// selected is the index of the selected unit in the run's state.
	selected int
	// confirm is the destructive action waiting for a yes.
	confirm *confirmation
	note    noteMsg
	// pane is the live child's screen (with its colours), paneOf its session.
	pane, paneOf string
	keys         keyMap
	help         help.Model
	styles       styles
	waker        *watch
}

// watch is a Waker that ends its waiter when it is closed.
type watch struct {
	*wake.Waker
	closed chan struct{}
}

func (w *watch) Close() {
	w.Waker.Close()
	close(w.closed)
}

// confirmation is an action asked about once before it is done.
type confirmation struct {
	question string
	do       func() tea.Msg
}

type (
	snapshotMsg struct {
		snap  Snapshot
		waker *watch
	}
	wakeMsg struct{}
	tickMsg time.Time
	paneMsg struct{ session, text string }
)

// clockTick is how often the clocks (elapsed, a wait's countdown) and a
// shown live pane refresh; everything else waits for a file to change.
const clockTick = time.Second

// New is the dashboard of src's project, acting through ctl.
func New(src Source, ctl Controls, color bool) Model {
	m := Model{src: src, ctl: ctl, now: src.Now(), width: 80, height: 24, keys: newKeyMap(), help: help.New(), styles: newStyles(color)}
	s := m.styles
	m.help.Styles = help.Styles{Ellipsis: s.dim, ShortKey: s.key, ShortDesc: s.tab, ShortSeparator: s.dim,
		FullKey: s.key, FullDesc: s.tab, FullSeparator: s.dim}
	m.help.SetWidth(m.width)
	return m
}

// WithSnapshot is m showing snap (tests and benchmarks render fixed states).
func (m Model) WithSnapshot(snap Snapshot, width, height int) Model {
	m.snap, m.loaded, m.width, m.height = snap, true, width, height
	m.help.SetWidth(width)
	m.clampSelection()
	return m
}

// Init loads the first snapshot and starts the clock.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.load(nil), tick())
}

func tick() tea.Cmd { return tea.Tick(clockTick, func(t time.Time) tea.Msg { return tickMsg(t) }) }

// load watches the project, then reads it (so no change between the two is missed).
func (m Model) load(old *watch) tea.Cmd {
	src, prev := m.src, m.snap
	return func() tea.Msg {
		if old != nil {
			old.Close()
		}
		w := &watch{Waker: src.Watch(prev), closed: make(chan struct{})}
		return snapshotMsg{snap: src.Load(context.Background()), waker: w}
	}
}

// waitWake blocks until something the snapshot reads changes, or the
// watch is replaced (closed): then it ends with no message.
func waitWake(w *watch) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-w.C:
			return wakeMsg{}
		case <-w.closed:
			return nil
		}
	}
}

// Update handles one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
	case snapshotMsg:
		m.snap, m.loaded, m.waker = msg.snap, true, msg.waker
		m.clampSelection()
		return m, tea.Batch(waitWake(msg.waker), m.capture())
	case wakeMsg:
		return m, m.load(m.waker)
	case tickMsg:
		m.now = time.Time(msg)
		return m, tea.Batch(tick(), m.capture())
	case paneMsg:
		m.pane, m.paneOf = msg.text, msg.session
	case noteMsg:
		m.note = msg
	case handOver:
		return m, msg.cmd
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// key handles a key press.
func (m Model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if c := m.confirm; c != nil {
		m.confirm = nil
		if msg.String() == "y" {
			return m, c.do
		}
		m.note = noteMsg{text: "nothing done"}
		return m, nil
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, k.NextView, k.PrevView, k.Run, k.Live, k.Runs, k.Loops, k.Deferred, k.Actions):
		m.switchView(msg)
		return m, m.capture()
	case key.Matches(msg, k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom):
		m.move(msg)
		return m, m.capture()
	default:
		return m.act(msg)
	}
	return m, nil
}

func (m *Model) switchView(msg tea.KeyPressMsg) {
	k := m.keys
	switch {
	case key.Matches(msg, k.NextView):
		m.view = (m.view + 1) % viewCount
	case key.Matches(msg, k.PrevView):
		m.view = (m.view + viewCount - 1) % viewCount
	default:
		m.view = view(msg.String()[0] - '1')
	}
	m.showHelp = false
}

func (m *Model) move(msg tea.KeyPressMsg) {
	k, page := m.keys, max(1, m.gridRows())
	switch {
	case key.Matches(msg, k.Up):
		m.selected--
	case key.Matches(msg, k.Down):
		m.selected++
	case key.Matches(msg, k.PageUp):
		m.selected -= page
	case key.Matches(msg, k.PageDown):
		m.selected += page
	case key.Matches(msg, k.Top):
		m.selected = 0
	case key.Matches(msg, k.Bottom):
		m.selected = 1 << 30
	}
	m.clampSelection()
}

func (m *Model) clampSelection() {
	n := 0
	if m.snap.State != nil {
		n = len(m.snap.State.Units)
	}
	m.selected = max(0, min(m.selected, n-1))
}

// act runs the action on a key, asking first when it is destructive.
func (m Model) act(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k, ctl := m.keys, m.ctl
	switch {
	case key.Matches(msg, k.Attach):
		s := m.workingSession()
		if w, remote := m.snap.Remote[s]; remote {
			m.note = noteMsg{text: "attaching to " + s + " on " + w.Host + "…"}
			return m, ctl.AttachRemote(m.src.Hosts, w, s)
		}
		if s != "" {
			return m, ctl.Attach(m.snap.Socket, s)
		}
		m.note = noteMsg{text: "no child session is working to attach to"}
	case key.Matches(msg, k.Pause):
		return m, func() tea.Msg { return ctl.Pause(context.Background()) }
	case key.Matches(msg, k.Resume):
		return m.resume()
	case key.Matches(msg, k.Resolve, k.Continue, k.Replan):
		return m.resolveKey(msg)
	case key.Matches(msg, k.Stop):
		m.confirm = &confirmation{question: "Stop the run? Its child sessions are killed and it pauses for --resume. y/N",
			do: func() tea.Msg { return ctl.Stop() }}
	case key.Matches(msg, k.State):
		if r := m.snap.Status.Run; r != nil {
			return m, ctl.Page(r.StateFile)
		}
		m.note = noteMsg{text: "no run, no state document"}
	}
	return m, nil
}

// resume starts `run --resume` for a run that needs one.
func (m Model) resume() (tea.Model, tea.Cmd) {
	r := m.snap.Status.Run
	if r == nil || r.Resume == "" {
		m.note = noteMsg{text: "nothing to resume: the run is " + m.runState()}
		return m, nil
	}
	path, socket, ctl := r.StateFile, m.snap.Socket, m.ctl
	return m, func() tea.Msg { return ctl.resume(path, socket) }
}

// resolveKey acts on the selected story as it stands: v resolves an
// escalated or parked one with an agent (`resolve STORY`); c approves a
// plan at its checkpoint or continues after a done checkpoint (both
// `run --resume`), or confirms a parked story (re-armed as `resolve
// --no-interactive`); n asks a planned story for a new plan (its spec back
// to draft, re-armed) and resumes.
func (m Model) resolveKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	st := m.snap.State
	if st == nil || m.selected >= len(st.Units) {
		m.note = noteMsg{text: "no run, no story"}
		return m, nil
	}
	u, k, ctl := st.Units[m.selected], m.keys, m.ctl
	var esc *orchestrator.Escalation
	if e := st.Escalation; e != nil && e.Unit == u.Dotted {
		esc = e
	}
	checkpoint := resolve.Checkpoint(esc)
	path, socket := "", m.snap.Socket
	if r := m.snap.Status.Run; r != nil {
		path = r.StateFile
	}
	story := u.Dotted
	switch {
	case u.Kind != orchestrator.KindStory && u.Status == orchestrator.StatusParked:
		m.note = noteMsg{text: story + " is parked: resolve and confirm take stories; settle it as its detail says, then r resumes the run"}
	case u.Kind != orchestrator.KindStory || !resolve.Blocked(u):
		m.note = noteMsg{text: story + " is " + u.Status + ": nothing to resolve, approve or confirm"}
	case key.Matches(msg, k.Resolve):
		return m, ctl.Resolve(story, socket)
	case key.Matches(msg, k.Replan) && checkpoint != bmad.CodePlanReview:
		m.note = noteMsg{text: story + " is not at a plan checkpoint: nothing to replan"}
	case key.Matches(msg, k.Replan):
		return m, func() tea.Msg {
			if _, err := ctl.Rearm(context.Background(), resolve.Options{Story: story, Replan: true, Message: "replan asked from the dashboard"}); err != nil {
				return noteMsg{err: err}
			}
			return ctl.resume(path, socket)
		}
	case checkpoint != "":
		return m, func() tea.Msg { return ctl.resume(path, socket) }
	case u.Status == orchestrator.StatusParked:
		return m, func() tea.Msg {
			if _, err := ctl.Rearm(context.Background(), resolve.Options{Story: story, Message: "confirmed from the dashboard"}); err != nil {
				return noteMsg{err: err}
			}
			return noteMsg{text: "confirmed " + story + ": r resumes the run"}
		}
	default:
		m.note = noteMsg{text: story + " is escalated, not at a checkpoint: v resolves it with an agent"}
	}
	return m, nil
}

// capture reads the live child's screen while the live view is shown.
func (m Model) capture() tea.Cmd {
	session := m.workingSession()
	if m.view != viewLive || session == "" {
		return nil
	}
	socket, pool := m.snap.Socket, m.src.Hosts
	where, remote := m.snap.Remote[session]
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var text string
		var err error
		switch {
		case !remote:
			text, err = tmux.New(socket).CapturePaneColors(ctx, session, 0)
		case pool == nil:
			err = errNoHosts
		default:
			text, err = pool.Capture(ctx, where, session, 0)
		}
		if err != nil {
			text = "(the session's screen cannot be read: " + err.Error() + ")"
		}
		return paneMsg{session: session, text: text}
	}
}

// errNoHosts is a remote child's screen asked of a dashboard that reaches no host.
var errNoHosts = errors.New("on an ssh host, not reached")

// workingSession is the child session to show and attach to: the selected
// story's, else the first one working.
func (m Model) workingSession() string {
	live := m.snap.Status.Sessions
	if st := m.snap.State; st != nil && m.selected < len(st.Units) {
		u := st.Units[m.selected]
		for _, s := range live {
			if m.unitOf(s.Story) == u {
				return s.Session
			}
		}
	}
	if len(live) > 0 {
		return live[0].Session
	}
	return ""
}

// unitOf is the run's unit a session works on: sessions name a story by
// its key (1-2) or its number (1.2), a retrospective by its epic.
func (m Model) unitOf(story string) *orchestrator.Unit {
	if st := m.snap.State; st != nil {
		for _, u := range st.Units {
			if u.Key == story || u.Dotted == story {
				return u
			}
		}
	}
	return nil
}

// storyName is how a session's story is shown: by its number when the run knows it.
func (m Model) storyName(story string) string {
	if u := m.unitOf(story); u != nil {
		return u.Dotted
	}
	return story
}

// runState is the run's state as the header names it.
func (m Model) runState() string {
	r := m.snap.Status.Run
	switch {
	case r == nil:
		return "none"
	case r.Status == orchestrator.RunInterrupted:
		return r.Status
	case m.snap.Waiting != nil:
		return runWaiting
	case r.Status == orchestrator.RunPaused && r.Escalation != nil:
		return "escalated"
	case r.Status == orchestrator.RunPaused && m.outcome() == runDoneWithParked:
		return runDoneWithParked
	}
	return r.Status
}

// runDoneWithParked is the state of a run that did every unit it could
// and left only parked ones (and those waiting on them).
const runDoneWithParked = string(orchestrator.OutcomeDoneWithParked)

// outcome is the run's outcome as `runs` lists it.
func (m Model) outcome() string {
	for _, s := range m.snap.Runs {
		if s.RunID == m.snap.Status.Run.RunID {
			return s.Outcome
		}
	}
	return ""
}
