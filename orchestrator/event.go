package orchestrator

import (
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/spend"
)

// Event kinds a run reports as it goes.
const (
	EventRunStarted   = "run_started"
	EventStepStarted  = "step_started"
	EventStepFinished = "step_finished"
	EventStepVerified = "step_verified"
	EventStepSkipped  = "step_skipped"
	EventStepFailed   = "step_failed_optional"
	EventBackoff      = "backoff"
	EventUnitDone     = "unit_done"
	EventEscalated    = "escalated"
	// EventBudgetExceeded: a budget was reached and the run pauses.
	EventBudgetExceeded = "budget_exceeded"
	// EventLimitWait: every agent a step could use is limited and the run
	// waits (ResetsAt says until when, when known); EventLimitResumed: the
	// wait ended and the run goes on.
	EventLimitWait    = "limit_wait"
	EventLimitResumed = "limit_resumed"
)

// Event is one thing that happened in a run.
type Event struct {
	At         time.Time `json:"-"`
	Kind       string    `json:"event"`
	Unit       string    `json:"unit,omitempty"`
	Step       string    `json:"step,omitempty"`
	Attempt    int       `json:"attempt,omitempty"`
	Cycle      int       `json:"cycle,omitempty"`
	Agent      string    `json:"agent,omitempty"`
	Role       string    `json:"role,omitempty"`
	FinalState string    `json:"finalState,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	// Code is an escalation's own code, when its cause has one (escalated).
	Code    string `json:"code,omitempty"`
	Session string `json:"session,omitempty"`
	Wait    string `json:"wait,omitempty"`
	Done    int    `json:"done,omitempty"`
	Total   int    `json:"total,omitempty"`
	Message string `json:"message,omitempty"`
	// ResetsAt is when a limit lifts (RFC 3339; limit_wait, and a limited
	// step_finished, when known).
	ResetsAt string `json:"resetsAt,omitempty"`
	// Model and AttemptUsage are a finished attempt's (usage omitted when
	// it could not be read); Usage is the run's spend so far.
	Model        string       `json:"model,omitempty"`
	AttemptUsage *spend.Usage `json:"attemptUsage,omitempty"`
	Usage        *spend.Total `json:"usage,omitempty"`
	// Budget is the run's limits (run_started only, when any is set).
	Budget *Budget `json:"budget,omitempty"`
	// Sandbox is whether the run's children are confined (run_started
	// only): SandboxOn or SandboxOff.
	Sandbox string `json:"sandbox,omitempty"`
}

// Reporter receives a run's events; implementations are safe for concurrent use.
type Reporter interface {
	Report(Event)
}

// DiscardReporter drops every event.
type DiscardReporter struct{}

var _ Reporter = DiscardReporter{}

// Report does nothing.
func (DiscardReporter) Report(Event) {}

// SpendText is a run's spend for people, against its budget when one is
// set: "spent $0.03 · 16.6k tokens (limit $0.05)".
func SpendText(t *spend.Total, b *Budget) string {
	if t == nil {
		t = &spend.Total{}
	}
	s := fmt.Sprintf("spent %s · %s tokens", spend.FormatCost(t.CostUSD), spend.FormatTokens(t.Tokens()))
	if t.Unpriced > 0 {
		s += fmt.Sprintf(" (%d attempts unpriced)", t.Unpriced)
	}
	if t.Unread > 0 {
		s += fmt.Sprintf(" (%d attempts unread)", t.Unread)
	}
	if b != nil {
		var lim []string
		if b.MaxCostUSD > 0 {
			lim = append(lim, spend.FormatCost(&b.MaxCostUSD))
		}
		if b.MaxTokens > 0 {
			lim = append(lim, spend.FormatTokens(b.MaxTokens)+" tokens")
		}
		if b.MaxDuration.Given() {
			lim = append(lim, b.MaxDuration.String())
		}
		if len(lim) > 0 {
			s += " of limit " + strings.Join(lim, ", ")
		}
	}
	return s
}
