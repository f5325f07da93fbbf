package monitor

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/verify"
	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/limit"
	"github.com/story-automator/story-automator/sessionstate"

	"github.com/story-automator/story-automator/marker"
)

// Tmux is what the monitor asks tmux, and only when a file cannot tell.
type Tmux interface {
	HasSession(ctx context.Context, name string) (bool, error)
	CapturePane(ctx context.Context, name string, lines int) (string, error)
	// SendKey presses one named key (a tmux key name); only a dialog the
	// user let the tool answer is ever sent keys.
	SendKey(ctx context.Context, name, key string) error
}

// Deps are the monitor's connections to the world, injected for tests.
type Deps struct {
	Tmux     Tmux
	StateDir string
	Now      func() time.Time
	// Tick is the fallback look interval when no event arrives (default 1s).
	Tick time.Duration
	// ProcessGone reports whether a pid has exited (default: kill(pid, 0)).
	ProcessGone func(pid int) bool
	// VerifyBound caps one verification (default 2m).
	VerifyBound time.Duration
	// NoEvents disables the kernel's wake-ups (internal/wake; tests of the
	// periodic look alone).
	NoEvents bool
	// SelectionWait bounds the wait for a dialog the tool answers to show
	// the selection made before it is confirmed (default 3s).
	SelectionWait time.Duration
}

// Watch blocks until the session reaches a final state and returns the result.
func Watch(ctx context.Context, name string, v Verifier, opt Options, d Deps) Result {
	d = d.withDefaults()
	start := d.Now()
	m := NewMachine(opt, start)
	if verify.IsContract(v) {
		m.verifyAtOnce = true
	}
	w := wake.New()
	defer w.Close()
	if !d.NoEvents {
		_ = watchState(w, d.StateDir, name)
	}
	o := &observer{dir: d.StateDir, name: name, gone: d.ProcessGone}
	o.scanner.path = sessionstate.OutputPath(d.StateDir, name)
	for {
		f := o.look(d.Now())
		if !d.NoEvents && f.State != nil && f.State.PanePid > 0 {
			_ = w.Process(f.State.PanePid) // the periodic look sees an exit too
		}
		if !d.NoEvents && o.limitRecord != "" {
			_ = w.File(o.limitRecord) // the limit's line in it ends the wait at once
			o.limitRecord = ""
		}
		act := m.Next(f)
		switch act.Kind {
		case ActFinish:
			o.stopAutoContinue(ctx, d.Tmux, act.Limit, d.SelectionWait)
			return o.result(act, m, v, d.Now().Sub(start))
		case ActVerify:
			vctx, cancel := context.WithTimeout(ctx, d.VerifyBound)
			m.Verified(v.Verify(vctx), d.Now())
			cancel()
		case ActProbeScreen:
			m.ScreenProbed(o.readScreen(ctx, d.Tmux), f.OutputSize)
		case ActAnswerDialog:
			m.DialogAnswered(o.answerDialog(ctx, d.Tmux, *act.Dialog, d.SelectionWait), d.Now())
		case ActProbeSession:
			exists, err := d.Tmux.HasSession(ctx, name)
			m.SessionProbed(exists || err != nil, d.Now())
		case ActWait:
			if due := o.limitDue; due.After(f.Now) && (act.Until.IsZero() || due.Before(act.Until)) {
				act.Until = due
			}
			if !sleepUntil(ctx, w.C, d.Now(), act.Until, d.Tick) {
				act = Action{Kind: ActFinish, State: Running, Reason: ReasonInterrupted}
				return o.result(act, m, v, d.Now().Sub(start))
			}
		}
	}
}

func (d Deps) withDefaults() Deps {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Tick <= 0 {
		d.Tick = time.Second
	}
	if d.ProcessGone == nil {
		d.ProcessGone = func(pid int) bool { return !proc.Alive(pid) }
	}
	if d.SelectionWait <= 0 {
		d.SelectionWait = defaultSelectionWait
	}
	if d.VerifyBound <= 0 {
		d.VerifyBound = 2 * time.Minute
	}
	return d
}

// sleepUntil waits for a wake-up, the deadline or one tick, whichever is
// first; it reports false when ctx ended.
func sleepUntil(ctx context.Context, wakeup <-chan struct{}, now, until time.Time, tick time.Duration) bool {
	d := tick
	if !until.IsZero() && until.Sub(now) < d {
		d = until.Sub(now)
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wakeup:
	case <-t.C:
	}
	return true
}

// observer gathers Facts from files and the process table.
type observer struct {
	dir, name string
	gone      func(pid int) bool
	scanner   doneLineScanner
	last      *sessionstate.State
	// exitRead: the output of an exited child was read for a refusal
	// and for a limit its CLI gave up at.
	exitRead   bool
	exitDialog *agent.Dialog
	exitLimit  *limit.Signal
	// limitDue is when a limit the hook recorded is read without waiting
	// longer for the CLI's record of it, limitRecord that record (to watch).
	limitDue    time.Time
	limitRecord string
	// lastFile is the state file last read into last (nil: read it again).
	lastFile os.FileInfo
}

// look reads the state file, checks the runner, and measures the output.
func (o *observer) look(now time.Time) Facts {
	f := Facts{Now: now}
	st := o.readState()
	if st != nil && st.PanePid > 0 && st.Lifecycle != sessionstate.LifecycleExited && o.gone(st.PanePid) {
		// The runner records its result before it exits: read again so a
		// result written just before the exit is not missed.
		f.RunnerGone = true
		st = o.readState()
		if st != nil && st.Lifecycle != sessionstate.LifecycleExited {
			// Settle the state for every other reader, once, under its lock.
			if settled, err := sessionstate.Reconcile(o.dir, o.name, now, o.gone); err == nil && settled != nil {
				o.last, st = settled, settled
			}
		}
	}
	f.State = st
	if st != nil {
		if p, ok := agent.LookupProfile(st.Agent); ok && (DetectorFor(p.Screen) != nil || len(p.Dialogs) > 0) {
			f.ScreenHeuristic = true
		}
		if st.OutputFile != "" {
			o.scanner.path = st.OutputFile
		}
	}
	if fi, err := os.Stat(o.scanner.path); err == nil {
		f.OutputSize, f.OutputModTime = fi.Size(), fi.ModTime()
		if st != nil && st.SendBaseline != nil {
			// Done lines printed before the last send belong to an earlier turn.
			o.scanner.skipTo(st.SendBaseline.OutputOffset, fi.Size())
		}
		f.DoneLines = o.scanner.scan(fi.Size())
	}
	f.ExitDialog = o.refusal(st, now)
	f.Limit = o.exitLimit
	if f.Limit == nil {
		f.Limit = o.hookLimit(st, now)
	}
	return f
}

// exitTailLines is how much of an exited child's output is read for a refusal
// or a limit (Gemini CLI prints a stack trace of some 30 lines after its error).
const exitTailLines = 80

// refusal reads, once, the last output of a child that exited non-zero for
// the refusals its profile knows (a CLI that will not start as root), and
// for the signs of a limit its CLI gave up at (kept in exitLimit).
func (o *observer) refusal(st *sessionstate.State, now time.Time) *agent.Dialog {
	if o.exitRead || st == nil || st.Lifecycle != sessionstate.LifecycleExited || st.ExitCode == nil || *st.ExitCode == 0 {
		return o.exitDialog
	}
	o.exitRead = true
	p, ok := agent.LookupProfile(st.Agent)
	if !ok {
		return nil
	}
	tail, err := sessionstate.OutputTail(o.scanner.path, exitTailLines)
	if err != nil {
		return nil
	}
	if d, ok := agent.MatchExitDialog(p.Dialogs, tail); ok {
		o.exitDialog = &d
	}
	o.exitLimit = exitLimit(p, st, tail, now)
	return o.exitDialog
}

// readState returns the newest readable state (a corrupt read keeps the
// last good one). A file that is still the one read last time is not read
// again: every writer replaces it (a new inode), so a look at every tick
// costs a stat, not a read and a JSON decode.
func (o *observer) readState() *sessionstate.State {
	fi, statErr := os.Stat(sessionstate.StatePath(o.dir, o.name))
	if statErr == nil && o.last != nil && o.lastFile != nil && os.SameFile(fi, o.lastFile) &&
		fi.Size() == o.lastFile.Size() && fi.ModTime().Equal(o.lastFile.ModTime()) {
		return o.last
	}
	st, err := sessionstate.Read(o.dir, o.name)
	switch {
	case err == nil:
		o.last, o.lastFile = st, fi
	case errors.Is(err, marker.ErrNotFound):
		o.last, o.lastFile = nil, nil
	default:
		o.lastFile = nil
	}
	return o.last
}

// readScreen captures the pane once and reads it with the agent profile's
// dialogs and screen heuristic.
func (o *observer) readScreen(ctx context.Context, t Tmux) ScreenVerdict {
	if o.last == nil {
		return ScreenVerdict{}
	}
	p, _ := agent.LookupProfile(o.last.Agent)
	detect := DetectorFor(p.Screen)
	if detect == nil && len(p.Dialogs) == 0 {
		return ScreenVerdict{}
	}
	screen, err := t.CapturePane(ctx, o.name, 0)
	if err != nil {
		return ScreenVerdict{}
	}
	done := detect != nil && detect(screen)
	// A limit in view above a finished turn is an earlier turn's; one the
	// limit hook recorded is read from its stamp and the CLI's record.
	if sig, ok := limit.FromScreen(p.Limits, screen, limit.Where{At: time.Now()}); ok && !done && o.last.Limit == nil {
		return ScreenVerdict{Limit: &sig}
	}
	if d, ok := agent.MatchDialog(p.Dialogs, screen); ok {
		return ScreenVerdict{Dialog: &d, Answer: o.mayAnswer(d)}
	}
	return ScreenVerdict{Done: done}
}

func (o *observer) result(act Action, m *Machine, v Verifier, elapsed time.Duration) Result {
	verdict := m.LastVerdict()
	r := Result{OK: true, Session: o.name, FinalState: act.State, Reason: act.Reason,
		OutputFile: o.scanner.path, OutputVerified: m.Verifications() > 0 && verdict.Verified,
		Verifier:       VerifierReport{Name: v.Name(), Verified: verdict.Verified, Detail: verdict.Detail, Attempts: m.Verifications()},
		ElapsedSeconds: math.Round(elapsed.Seconds()*1000) / 1000, Rechecks: m.Verifications()}
	if o.last != nil && o.last.Lifecycle == sessionstate.LifecycleExited {
		r.ExitCode = o.last.ExitCode
	}
	if act.Dialog != nil {
		r.Dialog, r.Action = act.Dialog.Kind, strings.ReplaceAll(act.Dialog.Action, "NAME", o.name)
	}
	if act.Limit != nil {
		if !act.Limit.ResetsAt.IsZero() {
			r.ResetsAt = act.Limit.ResetsAt.UTC().Format(time.RFC3339)
		}
		if o.last != nil {
			r.Agent = o.last.Agent
		}
	}
	return r
}
