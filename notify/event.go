// Package notify tells a person what a run needs: the notification event, the
// sinks it goes to (desktop, a command, webhooks) and a Sender that delivers
// it beside the run, bounded and retried, without ever holding the run up.
package notify

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/shellword"
)

// Event kinds (workflows.NotifyEvents, plus KindTest).
const (
	KindDone         = "done"
	KindEscalated    = "escalated"
	KindParked       = "parked"
	KindDialog       = "dialog"
	KindBudgetPaused = "budget_paused"
	KindLimitWait    = "limit_wait"
	KindLimitResumed = "limit_resumed"
	// KindTest is `story-automator notify test`'s event.
	KindTest = "test"
)

// Event is one notification, as a command's stdin and a json webhook get it.
type Event struct {
	Kind string `json:"event"`
	// Title and Message are for people: a line, then a few sentences ending
	// with what to do.
	Title   string `json:"title"`
	Message string `json:"message"`
	RunID   string `json:"runId,omitempty"`
	Project string `json:"project"`
	Story   string `json:"story,omitempty"`
	Step    string `json:"step,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// ResetsAt is when a limit lifts (RFC 3339; limit_wait, when known).
	ResetsAt string `json:"resetsAt,omitempty"`
	// Action is what a person should do, in words; Command the one command
	// to run next.
	Action  string `json:"action,omitempty"`
	Command string `json:"command,omitempty"`
	At      string `json:"at"`
}

// Urgent reports whether the event asks for a person now.
func (e Event) Urgent() bool {
	switch e.Kind {
	case KindEscalated, KindDialog, KindBudgetPaused:
		return true
	}
	return false
}

// Run is the run an event is about.
type Run struct {
	ID      string
	Project string
}

// base is an event of kind about r at now.
func (r Run) base(kind string, now time.Time) Event {
	return Event{Kind: kind, RunID: r.ID, Project: r.Project, At: now.UTC().Format(time.RFC3339)}
}

// name is the project's folder name, for titles.
func (r Run) name() string { return filepath.Base(r.Project) }

// command is a story-automator command line run in the project.
func (r Run) command(args string) string {
	return "story-automator --project-root " + shellword.MustQuote(r.Project) + " " + args
}

// Done is the event of a run that finished every story.
func Done(r Run, now time.Time, stories int) Event {
	e := r.base(KindDone, now)
	e.Title = "story-automator: " + r.name() + " done"
	e.Command = r.command("runs show " + r.ID)
	e.Message = finish(fmt.Sprintf("Run %s finished: %d %s done, each in its own commit.", r.ID, stories, plural(stories, "story", "stories")), "", e.Command)
	return e
}

// DoneWithParked is the event of a run that did every story it could and
// left parked ones (their dotted ids) for a person.
func DoneWithParked(r Run, now time.Time, done int, parked []string) Event {
	e := r.base(KindDone, now)
	e.Title = "story-automator: " + r.name() + " done, " + fmt.Sprintf("%d %s parked", len(parked), plural(len(parked), "story", "stories"))
	e.Command = r.command("status")
	e.Message = finish(fmt.Sprintf("Run %s did every story it could: %d done; parked: %s, and the stories that depend on them wait.",
		r.ID, done, strings.Join(parked, ", ")), "Settle each parked story as its action says (status shows it), then run `story-automator run --resume`.", e.Command)
	return e
}

// Parked is the event of a story parked for a person while the run goes
// on (reason, and action: what to do).
func Parked(r Run, now time.Time, story, step, reason, action string) Event {
	e := r.base(KindParked, now)
	e.Story, e.Step, e.Reason, e.Action = story, step, reason, action
	e.Title = "story-automator: story " + story + " parked in " + r.name()
	e.Command = r.command("run --resume")
	e.Message = finish("Story "+story+" is parked, the other stories go on: "+reason+".", action, e.Command)
	return e
}

// Escalated is the event of a run that paused for a person (reason, and
// action: what to do).
func Escalated(r Run, now time.Time, story, step, reason, action string) Event {
	e := r.base(KindEscalated, now)
	e.Story, e.Step, e.Reason, e.Action = story, step, reason, action
	e.Title = "story-automator: " + r.name() + " needs you"
	e.Command = r.command("run --resume")
	e.Message = finish("The run paused: "+reason+".", action, e.Command)
	return e
}

// Dialog is the event of a child that waits at a dialog only a person can settle.
func Dialog(r Run, now time.Time, story, step, reason, action string) Event {
	e := Escalated(r, now, story, step, reason, action)
	e.Kind = KindDialog
	e.Title = "story-automator: an agent in " + r.name() + " waits at a dialog"
	return e
}

// BudgetPaused is the event of a run that reached a budget.
func BudgetPaused(r Run, now time.Time, story, step, reason, action string) Event {
	e := Escalated(r, now, story, step, reason, action)
	e.Kind = KindBudgetPaused
	e.Title = "story-automator: " + r.name() + " paused on its budget"
	return e
}

// LimitWait is the event of a run that waits for an agent's limit to lift
// (resetsAt "" when unknown).
func LimitWait(r Run, now time.Time, story, step, agentName, reason, resetsAt string) Event {
	e := r.base(KindLimitWait, now)
	e.Story, e.Step, e.Agent, e.Reason, e.ResetsAt = story, step, agentName, reason, resetsAt
	e.Title = "story-automator: " + r.name() + " waits on a limit"
	when := "when the limit lifts"
	if t, err := time.Parse(time.RFC3339, resetsAt); err == nil {
		when = "at " + t.UTC().Format("15:04 UTC (Jan 2)")
	}
	e.Command = r.command("status")
	e.Message = finish(fmt.Sprintf("%s met a limit (%s); the run goes on by itself %s.", orWord(agentName, "The agent"), orWord(reason, "limit"), when),
		"Nothing to do; to see the countdown:", e.Command)
	return e
}

// LimitResumed is the event of a run that goes on after a wait.
func LimitResumed(r Run, now time.Time, story, step, agentName string) Event {
	e := r.base(KindLimitResumed, now)
	e.Story, e.Step, e.Agent = story, step, agentName
	e.Title = "story-automator: " + r.name() + " resumed"
	e.Command = r.command("status")
	e.Message = finish("The limit lifted; the run goes on.", "", e.Command)
	return e
}

// Test is `notify test`'s event.
func Test(r Run, now time.Time) Event {
	e := r.base(KindTest, now)
	e.Title = "story-automator: test notification"
	e.Message = "This is a test from `story-automator notify test` in " + r.Project + ": this sink works."
	return e
}

func finish(what, action, command string) string {
	s := what
	if action != "" {
		s += " " + action
	}
	if command != "" {
		s += "\n" + command
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
