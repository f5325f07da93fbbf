package timeline

import (
	"fmt"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// times is the run's stretch of time on the chart.
type times struct {
	start, end time.Time
	// updated is when the state was last written: where an attempt with no
	// recorded end stops, in a run that is not going.
	updated time.Time
	// now ends the attempts still going in a live run.
	now  time.Time
	live bool
}

// runTimes spans the run from its start to its end: the finish, or the
// last thing recorded, or (only while the run still goes) now.
func runTimes(st *orchestrator.State, opt Options) *times {
	tl := &times{live: opt.Live, now: opt.Now}
	tl.start, _ = parse(st.StartedAt)
	tl.updated, _ = parse(st.UpdatedAt)
	tl.end = tl.updated
	if f, ok := parse(st.FinishedAt); ok {
		tl.end = f
	}
	each(st, func(_ *orchestrator.Unit, _ *orchestrator.StepState, a orchestrator.Attempt) {
		if s, ok := parse(a.StartedAt); ok && (tl.start.IsZero() || s.Before(tl.start)) {
			tl.start = s
		}
		if e, ok := parse(a.EndedAt); ok && e.After(tl.end) {
			tl.end = e
		}
	})
	if opt.Live && opt.Now.After(tl.end) {
		tl.end = opt.Now
	}
	if tl.end.Before(tl.start) {
		tl.end = tl.start
	}
	if tl.updated.IsZero() {
		tl.updated = tl.end
	}
	return tl
}

// span is an attempt's start and end. One with no recorded end runs to now
// in a live run; otherwise it stopped, unrecorded, by the time the state
// was last written.
func (tl *times) span(a orchestrator.Attempt) (from, to time.Time) {
	from, ok := parse(a.StartedAt)
	if !ok {
		from = tl.start
	}
	switch end, ok := parse(a.EndedAt); {
	case ok:
		to = end
	case a.WallMs > 0:
		to = from.Add(time.Duration(a.WallMs) * time.Millisecond)
	case tl.live:
		to = tl.now
	default:
		to = tl.updated
	}
	if to.Before(from) {
		to = from
	}
	return from, to
}

// Display states besides the final states: an attempt still going, and
// one with no end recorded in a run that is not going.
const (
	stateRunning    = "running"
	stateUnfinished = "unfinished"
)

func displayState(a orchestrator.Attempt, live bool) string {
	switch {
	case a.FinalState != "":
		return a.FinalState
	case live:
		return stateRunning
	}
	return stateUnfinished
}

func each(st *orchestrator.State, fn func(*orchestrator.Unit, *orchestrator.StepState, orchestrator.Attempt)) {
	for _, u := range st.Units {
		for _, step := range u.Steps {
			for _, a := range step.Attempts {
				fn(u, step, a)
			}
		}
	}
}

func parse(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t.UTC(), err == nil
}

// clock is a time of day in UTC.
func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// stamp is a date and time in UTC.
func stamp(s string) string {
	t, ok := parse(s)
	if !ok {
		return "—"
	}
	return t.Format("2006-01-02 15:04:05") + " UTC"
}

// duration prints a duration to the second (0.4s under one): 45s,
// 12m30s, 1h02m.
func duration(d time.Duration) string {
	if d > 0 && d < time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return d.String()
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func costText(t spend.Total) string {
	s := spend.FormatCost(t.CostUSD)
	if t.Unpriced > 0 || t.Unread > 0 {
		s += "+?" // some attempts have tokens without a price, or no figures at all
	}
	return s
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

// attemptID names an attempt's bar and table row: stable for a given state.
func attemptID(u *orchestrator.Unit, step *orchestrator.StepState, a orchestrator.Attempt) string {
	return fmt.Sprintf("a-%s-%s-%d", u.Key, step.Name, a.N)
}
