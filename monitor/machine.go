package monitor

import (
	"fmt"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/limit"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux/child"
)

// Options tune the wait; zero durations disable what they bound.
type Options struct {
	Timeout     time.Duration
	ReturnAfter time.Duration
	// Rechecks is how many verifications a completion gets in all (at least 1).
	Rechecks     int
	RecheckGrace time.Duration
	// IdleDebounce is how long the output must rest before the screen is read.
	IdleDebounce time.Duration
	// StartTimeout bounds the wait for the runner to record a started agent process.
	StartTimeout time.Duration
	// StuckAfter bounds how long a started agent's output may stay unchanged.
	StuckAfter time.Duration
	// ActiveBytes of new output after a failed verification make the session
	// active again, which gives its recheck budget back.
	ActiveBytes int64
	// ProbeEvery spaces tmux has-session calls while no runner is recorded.
	ProbeEvery time.Duration
}

// DefaultOptions are monitor-session's defaults.
func DefaultOptions() Options {
	return Options{Timeout: 60 * time.Minute, Rechecks: 3, RecheckGrace: 15 * time.Second,
		IdleDebounce: time.Second, StartTimeout: 2 * time.Minute, StuckAfter: 30 * time.Minute,
		ActiveBytes: 2048, ProbeEvery: time.Second}
}

// Facts is one cheap look at a child session, gathered without tmux.
type Facts struct {
	Now   time.Time
	State *sessionstate.State // nil: no state file
	// RunnerGone: the runner process recorded in State no longer exists.
	RunnerGone    bool
	OutputSize    int64
	OutputModTime time.Time
	DoneLines     int
	// ScreenHeuristic: the agent's profile has a screen completion heuristic.
	ScreenHeuristic bool
	// ExitDialog: the agent exited non-zero refusing to start for a reason
	// its user must settle, read from its last output (Dialog.OnExit).
	ExitDialog *agent.Dialog
	// Limit: the agent's CLI gave up at a usage limit, a rate limit or an
	// API fault (its hook's record, or its last output at a non-zero exit).
	Limit *limit.Signal
}

// ActionKind is what the machine asks its driver to do next.
type ActionKind int

// Actions.
const (
	ActWait ActionKind = iota
	ActVerify
	ActProbeScreen
	ActProbeSession
	ActFinish
	// ActAnswerDialog: answer the dialog on screen the user let the tool answer.
	ActAnswerDialog
)

// Action is the machine's next step; Until is when something is next due (ActWait).
type Action struct {
	Kind   ActionKind
	Until  time.Time
	State  FinalState
	Reason string
	// Dialog is the dialog a stuck child waits at (Reason = ReasonDialog).
	Dialog *agent.Dialog
	// Limit is what a limited child's CLI said (State = Limited).
	Limit *limit.Signal
}

// ScreenVerdict is what one read of the child's screen showed.
type ScreenVerdict struct {
	// Done: the agent's turn is over (its profile's screen heuristic).
	Done bool
	// Dialog: the agent waits at a dialog only its user can settle.
	Dialog *agent.Dialog
	// Answer: the user let the tool answer this dialog, and it has not yet.
	Answer bool
	// Limit: the agent's CLI shows it gave up at a limit.
	Limit *limit.Signal
}

// Machine is monitor-session's decision logic, free of I/O: the driver
// feeds it Facts and the answers to its requests, and it says what to do.
type Machine struct {
	opt   Options
	start time.Time

	observed   bool
	lastSize   int64
	lastChange time.Time

	handledTurns, handledDone int
	exitHandled, screenUsed   bool
	screenSize                int64
	screenDone                bool
	lastProbe                 time.Time
	probed, sessionGone       bool

	inSequence    bool
	signal        string
	used          int
	verifications int
	graceUntil    time.Time
	sizeAtVerify  int64
	lastVerdict   Verdict
	// verifyAtOnce: the verifier is known to be broken, so it is consulted as
	// soon as the session is known to exist, not at a completion.
	verifyAtOnce bool
	// answering is a dialog to answer before anything else.
	answering *agent.Dialog

	final *Action
}

// NewMachine starts the clock at start.
func NewMachine(opt Options, start time.Time) *Machine {
	if opt.Rechecks < 1 {
		opt.Rechecks = 1
	}
	return &Machine{opt: opt, start: start, screenSize: -1}
}

// Verifications is how many verifications were made in all.
func (m *Machine) Verifications() int { return m.verifications }

// LastVerdict is the most recent verifier answer.
func (m *Machine) LastVerdict() Verdict { return m.lastVerdict }

// Next decides the next step from a fresh look at the session.
func (m *Machine) Next(f Facts) Action {
	if m.final != nil {
		return *m.final
	}
	m.observeOutput(f)
	if f.Limit != nil {
		return m.finishLimited(*f.Limit)
	}
	st := f.State
	exited := st != nil && st.Lifecycle == sessionstate.LifecycleExited
	if exited {
		if d, ok := m.exitDialog(st); ok {
			return m.finishAtDialog(d)
		}
		if f.ExitDialog != nil {
			return m.finishAtDialog(*f.ExitDialog)
		}
		if st.Signal != "" {
			return m.finish(Crashed, reasonSignalPrefix+st.Signal)
		}
		if st.ExitCode != nil && *st.ExitCode != 0 {
			return m.finish(Crashed, fmt.Sprintf("%s%d", reasonExitCodePrefix, *st.ExitCode))
		}
		if !m.exitHandled {
			m.exitHandled = true
			return m.verify(SignalExit)
		}
	}
	if m.opt.Timeout > 0 && !f.Now.Before(m.start.Add(m.opt.Timeout)) {
		return m.finish(TimedOut, ReasonTimeout)
	}
	if m.answering != nil {
		return Action{Kind: ActAnswerDialog, Dialog: m.answering}
	}
	if m.inSequence {
		return m.continueSequence(f, exited)
	}
	if sig := m.newCompletion(f); sig != "" {
		return m.verify(sig)
	}
	if a, ok := m.goneOrProbe(f, exited); ok {
		return a
	}
	if m.verifyAtOnce && m.verifications == 0 {
		return m.verify("")
	}
	return m.idleStep(f, exited)
}

// continueSequence handles the grace between verifications of one completion.
func (m *Machine) continueSequence(f Facts, exited bool) Action {
	if sig := m.newCompletion(f); sig != "" {
		return m.verify(sig)
	}
	if !exited && f.OutputSize-m.sizeAtVerify >= m.opt.ActiveBytes {
		// The agent is working again: that completion was false, and the next one gets a full budget.
		m.inSequence, m.used = false, 0
		return m.idleStep(f, exited)
	}
	if !f.Now.Before(m.graceUntil) {
		return Action{Kind: ActVerify}
	}
	return m.wait(f, m.graceUntil)
}

// newCompletion returns a completion signal not acted on yet, in the SPEC's order after exit.
// Turns up to the last `session send` were seen before it and do not count.
func (m *Machine) newCompletion(f Facts) string {
	if st := f.State; st != nil && st.SendBaseline != nil && st.SendBaseline.Turns > m.handledTurns {
		m.handledTurns = st.SendBaseline.Turns
	}
	if st := f.State; st != nil && st.Completion != nil && st.Completion.Turns > m.handledTurns {
		m.handledTurns = st.Completion.Turns
		return SignalStopHook
	}
	if f.DoneLines > m.handledDone {
		m.handledDone = f.DoneLines
		return SignalDoneLine
	}
	if m.screenDone && !m.screenUsed && m.screenSize == f.OutputSize {
		m.screenUsed = true
		return SignalScreen
	}
	return ""
}

// goneOrProbe finds a session that is gone with no recorded result, asking
// tmux only while no runner process is recorded.
func (m *Machine) goneOrProbe(f Facts, exited bool) (Action, bool) {
	st := f.State
	switch {
	case exited:
		return Action{}, false
	case st != nil && st.Lifecycle == child.LifecycleKilled:
		return m.finish(NotFound, ReasonSessionGone), true
	case st != nil && st.PanePid > 0:
		if f.RunnerGone {
			return m.finish(NotFound, ReasonSessionGone), true
		}
		return Action{}, false
	}
	if !m.probed && st != nil && f.Now.Before(m.startRef(st).Add(m.opt.ProbeEvery)) {
		// Just spawned, its runner not recorded yet: the runner records
		// within milliseconds and its record wakes the monitor. Ask tmux only
		// if it has not by then (a run would spend a tmux process on every step).
		return Action{}, false
	}
	if m.probed && m.sessionGone {
		if st == nil {
			return m.finish(NotFound, ReasonNoSuchSession), true
		}
		return m.finish(NotFound, ReasonSessionGone), true
	}
	if !m.probed || !f.Now.Before(m.lastProbe.Add(m.opt.ProbeEvery)) {
		return Action{Kind: ActProbeSession}, true
	}
	return Action{}, false
}

// idleStep covers the quiet time: screen heuristics, stuck detection, return-after.
func (m *Machine) idleStep(f Facts, exited bool) Action {
	if m.screenPending(f) && !f.Now.Before(m.lastChange.Add(m.opt.IdleDebounce)) {
		return Action{Kind: ActProbeScreen}
	}
	if !exited {
		started := agentStarted(f.State)
		if !started && m.opt.StartTimeout > 0 && !f.Now.Before(m.startRef(f.State).Add(m.opt.StartTimeout)) {
			return m.finish(Stuck, ReasonNeverStarted)
		}
		if started && m.opt.StuckAfter > 0 && !f.Now.Before(m.lastChange.Add(m.opt.StuckAfter)) {
			return m.finish(Stuck, ReasonNoProgress)
		}
	}
	if m.opt.ReturnAfter > 0 && !f.Now.Before(m.start.Add(m.opt.ReturnAfter)) {
		return m.finish(Running, ReasonReturnAfter)
	}
	return m.wait(f, time.Time{})
}

// screenPending reports whether the screen heuristic has something to read:
// the agent runs, has printed since the last send, and its screen was not
// read at this output size yet.
func (m *Machine) screenPending(f Facts) bool {
	st := f.State
	if !f.ScreenHeuristic || st == nil || st.Lifecycle != sessionstate.LifecycleStarted || f.RunnerGone {
		return false
	}
	var floor int64
	if st.SendBaseline != nil {
		floor = st.SendBaseline.OutputOffset
	}
	return f.OutputSize > floor && m.screenSize != f.OutputSize
}

// agentStarted reports whether the runner has recorded a started agent process.
func agentStarted(st *sessionstate.State) bool { return st != nil && st.AgentPid > 0 }

// wait returns ActWait until the earliest future deadline that can change
// the answer, each under the same condition as the step it leads to; a zero
// Until means only an event or the driver's fallback tick.
func (m *Machine) wait(f Facts, extra time.Time) Action {
	var until time.Time
	consider := func(t time.Time) {
		if t.After(f.Now) && (until.IsZero() || t.Before(until)) {
			until = t
		}
	}
	consider(extra)
	if m.opt.Timeout > 0 {
		consider(m.start.Add(m.opt.Timeout))
	}
	if !m.inSequence {
		exited := f.State != nil && f.State.Lifecycle == sessionstate.LifecycleExited
		started := agentStarted(f.State)
		if m.opt.ReturnAfter > 0 {
			consider(m.start.Add(m.opt.ReturnAfter))
		}
		if m.screenPending(f) {
			consider(m.lastChange.Add(m.opt.IdleDebounce))
		}
		if !exited && !started && m.opt.StartTimeout > 0 {
			consider(m.startRef(f.State).Add(m.opt.StartTimeout))
		}
		if !exited && started && m.opt.StuckAfter > 0 {
			consider(m.lastChange.Add(m.opt.StuckAfter))
		}
		if m.probed && (f.State == nil || f.State.PanePid == 0) {
			consider(m.lastProbe.Add(m.opt.ProbeEvery))
		}
		if !m.probed && f.State != nil && f.State.PanePid == 0 && !exited {
			consider(m.startRef(f.State).Add(m.opt.ProbeEvery))
		}
	}
	return Action{Kind: ActWait, Until: until}
}

// Verified records a verifier's answer.
func (m *Machine) Verified(v Verdict, now time.Time) {
	m.verifications++
	m.used++
	m.lastVerdict = v
	switch {
	case v.ContractErr != nil:
		m.finish(Incomplete, ReasonContract)
	case v.Verified:
		m.finish(Completed, m.signal)
	case m.used >= m.opt.Rechecks:
		m.finish(Incomplete, ReasonNotVerified)
	default:
		m.graceUntil = now.Add(m.opt.RecheckGrace)
		m.sizeAtVerify = m.lastSize
	}
}

// ScreenProbed records what the screen showed at output size size; a
// dialog ends the wait at once (stuck), since nothing but its user moves it,
// unless the user let the tool answer it (then the next action answers it).
func (m *Machine) ScreenProbed(v ScreenVerdict, size int64) {
	m.screenSize, m.screenDone, m.screenUsed = size, v.Done, false
	switch {
	case m.final != nil:
	case v.Limit != nil:
		m.finishLimited(*v.Limit)
	case v.Dialog == nil:
	case v.Answer:
		d := *v.Dialog
		m.answering = &d
	default:
		m.finishAtDialog(*v.Dialog)
	}
}

// DialogAnswered records the answer to the dialog of ActAnswerDialog: a
// dialog that could not be answered leaves the child stuck at it. An
// answered one is not answered again: the screen is read afresh once the
// output has rested for the idle debounce after the answer, and a dialog
// still there then leaves the child stuck at it.
func (m *Machine) DialogAnswered(ok bool, now time.Time) {
	d := m.answering
	m.answering = nil
	if d != nil && !ok && m.final == nil {
		m.finishAtDialog(*d)
		return
	}
	m.screenSize, m.lastChange = -1, now
}

// exitDialog maps an exit code the agent's profile knows as a dialog.
func (m *Machine) exitDialog(st *sessionstate.State) (agent.Dialog, bool) {
	if st.ExitCode == nil {
		return agent.Dialog{}, false
	}
	p, ok := agent.LookupProfile(st.Agent)
	if !ok {
		return agent.Dialog{}, false
	}
	d, ok := p.ExitDialogs[*st.ExitCode]
	return d, ok
}

func (m *Machine) finishAtDialog(d agent.Dialog) Action {
	a := m.finish(Stuck, ReasonDialog)
	m.final.Dialog = &d
	a.Dialog = &d
	return a
}

// finishLimited ends the wait at a limit the child's CLI gave up at.
func (m *Machine) finishLimited(sig limit.Signal) Action {
	a := m.finish(Limited, sig.Reason)
	m.final.Limit = &sig
	a.Limit = &sig
	return a
}

// SessionProbed records whether tmux still has the session.
func (m *Machine) SessionProbed(exists bool, now time.Time) {
	m.probed, m.sessionGone, m.lastProbe = true, !exists, now
}

func (m *Machine) verify(signal string) Action {
	m.inSequence, m.signal = true, signal
	return Action{Kind: ActVerify}
}

func (m *Machine) finish(s FinalState, reason string) Action {
	m.final = &Action{Kind: ActFinish, State: s, Reason: reason}
	return *m.final
}

func (m *Machine) observeOutput(f Facts) {
	if !m.observed {
		m.observed, m.lastSize, m.lastChange = true, f.OutputSize, f.OutputModTime
		if m.lastChange.IsZero() || m.lastChange.After(f.Now) {
			m.lastChange = f.Now
		}
		return
	}
	if f.OutputSize != m.lastSize {
		m.lastSize, m.lastChange = f.OutputSize, f.Now
	}
}

// startRef is when the session began: its recorded creation, or the monitor's start.
func (m *Machine) startRef(st *sessionstate.State) time.Time {
	if st != nil {
		if t, err := time.Parse(time.RFC3339Nano, st.CreatedAt); err == nil && t.Before(m.start) {
			return t
		}
	}
	return m.start
}
