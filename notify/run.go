package notify

import (
	"sync"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// codeAgentDialog is the escalation code of a child waiting at a dialog only
// its user can settle (tmuxsteps.CodeAgentDialog; a test keeps them equal).
const codeAgentDialog = "agent_dialog"

// RunReporter passes a run's events on to Next and sends those a person
// should hear of (a dialog, a budget pause, a limit's wait and its end)
// through Sender; End sends how the run ended. It never waits for a sink.
type RunReporter struct {
	Next   orchestrator.Reporter
	Sender *Sender
	// Policy says which kinds are sent.
	Policy  workflows.Notify
	Project string
	Now     func() time.Time

	mu    sync.Mutex
	runID string
	// dialog is the unit and step whose escalation went out as a dialog:
	// the run's end does not say it again.
	dialog string
}

var _ orchestrator.Reporter = (*RunReporter)(nil)

// Report passes ev on and notifies when it matters.
func (r *RunReporter) Report(ev orchestrator.Event) {
	if r.Next != nil {
		r.Next.Report(ev)
	}
	run := r.track(ev)
	at := ev.At
	if at.IsZero() {
		at = r.Now()
	}
	switch ev.Kind {
	case orchestrator.EventEscalated:
		if ev.Code == codeAgentDialog {
			r.send(Dialog(run, at, ev.Unit, ev.Step, ev.Reason, ev.Message))
		}
	case orchestrator.EventParked:
		r.send(Parked(run, at, ev.Unit, ev.Step, ev.Reason, ev.Message))
	case orchestrator.EventBudgetExceeded:
		r.send(BudgetPaused(run, at, ev.Unit, ev.Step, ev.Reason, ev.Message))
	case orchestrator.EventLimitWait:
		r.send(LimitWait(run, at, ev.Unit, ev.Step, ev.Agent, ev.Reason, ev.ResetsAt))
	case orchestrator.EventLimitResumed:
		r.send(LimitResumed(run, at, ev.Unit, ev.Step, ev.Agent))
	}
}

// track notes the run's id and a dialog's escalation, and returns the run.
func (r *RunReporter) track(ev orchestrator.Event) Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case ev.Kind == orchestrator.EventRunStarted:
		r.runID = ev.Message
	case ev.Kind == orchestrator.EventEscalated && ev.Code == codeAgentDialog:
		r.dialog = ev.Unit + "/" + ev.Step
	}
	return Run{ID: r.runID, Project: r.Project}
}

// End notifies how the run ended: done, or escalated (unless that
// escalation already went out as a dialog, or the run paused on its budget,
// which went out as it happened). A run stopped by its user, or one that
// never started, says nothing. err is orchestrator.Run's.
func (r *RunReporter) End(res *orchestrator.Result, err error) {
	if res == nil || res.State == nil || res.DryRun {
		return
	}
	st := res.State
	run := Run{ID: st.RunID, Project: r.Project}
	now := r.Now()
	switch {
	case res.Outcome == orchestrator.OutcomeDone && err == nil:
		_, total := st.StoryCounts()
		r.send(Done(run, now, total))
	case res.Outcome == orchestrator.OutcomeDoneWithParked:
		var parked []string
		done := 0
		for _, u := range st.Units {
			switch {
			case u.Status == orchestrator.StatusParked:
				parked = append(parked, u.Dotted)
			case u.Status == orchestrator.StatusDone && u.Kind == orchestrator.KindStory:
				done++
			}
		}
		r.send(DoneWithParked(run, now, done, parked))
	case res.Outcome == orchestrator.OutcomeEscalated && st.Escalation != nil:
		esc := st.Escalation
		r.mu.Lock()
		said := esc.Code == codeAgentDialog && r.dialog == esc.Unit+"/"+esc.Step
		r.mu.Unlock()
		if !said {
			r.send(Escalated(run, now, esc.Unit, esc.Step, esc.Reason, esc.Action))
		}
	case res.Outcome == "" && err != nil:
		r.send(Escalated(run, now, "", "", "the run failed: "+err.Error(), "See the state document's action log, fix the cause, then run `story-automator run --resume`."))
	}
}

func (r *RunReporter) send(ev Event) {
	if r.Policy.Wants(ev.Kind) {
		r.Sender.Notify(ev)
	}
}
