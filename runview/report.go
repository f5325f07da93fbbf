package runview

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// LineReporter prints one line of text per event: for logs, pipes and CI.
type LineReporter struct {
	mu sync.Mutex
	W  io.Writer
}

var _ orchestrator.Reporter = (*LineReporter)(nil)

// Report prints the event as a line.
func (r *LineReporter) Report(ev orchestrator.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.W, "%s %s\n", ev.At.UTC().Format("15:04:05"), describeEvent(ev))
}

// JSONReporter prints one JSON object per event, with its time in "at".
type JSONReporter struct {
	mu sync.Mutex
	W  io.Writer
}

var _ orchestrator.Reporter = (*JSONReporter)(nil)

// Report prints the event as a JSON line.
func (r *JSONReporter) Report(ev orchestrator.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	type line struct {
		At string `json:"at"`
		orchestrator.Event
	}
	data, err := json.Marshal(line{At: ev.At.UTC().Format(time.RFC3339Nano), Event: ev})
	if err != nil {
		return
	}
	_, _ = r.W.Write(append(data, '\n')) // a reader gone away: the run goes on
}

// describeEvent is the human sentence for an event.
func describeEvent(ev orchestrator.Event) string {
	where := ev.Unit
	if ev.Step != "" {
		where += " " + ev.Step
	}
	switch ev.Kind {
	case orchestrator.EventRunStarted:
		return fmt.Sprintf("run %s started: %d of %d stories done", ev.Message, ev.Done, ev.Total)
	case orchestrator.EventStepStarted:
		if ev.Attempt == 0 {
			return where + " started"
		}
		return fmt.Sprintf("%s attempt %d%s started (%s, %s)", where, ev.Attempt, cycleText(ev.Cycle), ev.Agent, ev.Role)
	case orchestrator.EventStepFinished:
		s := fmt.Sprintf("%s attempt %d%s: %s", where, ev.Attempt, cycleText(ev.Cycle), ev.FinalState)
		if ev.Reason != "" {
			s += " (" + ev.Reason + ")"
		}
		if u := ev.AttemptUsage; u != nil {
			s += fmt.Sprintf(" · %s tokens, %s", spend.FormatTokens(u.Tokens()), spend.FormatCost(u.CostUSD))
		}
		return s
	case orchestrator.EventStepVerified:
		return where + " verified"
	case orchestrator.EventStepSkipped:
		return where + " skipped: " + ev.Reason
	case orchestrator.EventStepFailed:
		return where + " gave up (optional, the story goes on): " + ev.Reason
	case orchestrator.EventBackoff:
		return where + " retrying in " + ev.Wait
	case orchestrator.EventUnitDone:
		return fmt.Sprintf("%s done (%d of %d stories)", where, ev.Done, ev.Total)
	case orchestrator.EventEscalated:
		return "ESCALATED " + ev.Reason + " — " + ev.Message
	case orchestrator.EventParked:
		return "PARKED " + ev.Reason + "; the other stories go on — " + ev.Message
	case orchestrator.EventLimitWait:
		s := fmt.Sprintf("WAITING %s: %s met a limit (%s)", where, ev.Agent, ev.Reason)
		if ev.ResetsAt != "" {
			s += ", it lifts at " + ev.ResetsAt
		}
		return s + "; the run goes on by itself in " + ev.Wait
	case orchestrator.EventLimitResumed:
		return fmt.Sprintf("the wait for %s's limit (%s) is over; the run goes on", ev.Agent, ev.Reason)
	case orchestrator.EventBudgetExceeded:
		return "BUDGET REACHED " + ev.Reason + " — " + ev.Message
	}
	return where + " " + ev.Kind
}

func cycleText(c int) string {
	if c == 0 {
		return ""
	}
	return fmt.Sprintf(" (review cycle %d)", c)
}
