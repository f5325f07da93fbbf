package timeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// The chart's geometry, in CSS pixels: a label column, the time axis, a
// spend column. Fixed numbers keep the picture the same on every machine
// whatever its fonts (the golden screenshot test relies on it).
const (
	chartWidth = 1140
	labelWidth = 250
	spendWidth = 150
	plotLeft   = labelWidth
	plotRight  = chartWidth - spendWidth - 12
	axisHeight = 30
	rowHeight  = 30
	barHeight  = 18
	minBarW    = 3
	labelChars = 30
	// charWidth is a generous width of one character of the bars' 11px
	// labels: a label is drawn inside its bar only when it surely fits.
	charWidth = 7.0
)

// chart is the SVG timeline: one row per story (or retrospective), one
// bar per attempt.
type chart struct {
	Width, Height int
	PlotLeft      int
	PlotRight     int
	AxisY         int
	Rows          []row
	Ticks         []tick
	Bars          []bar
	Waits         []wait
	Escalations   []escalationMark
	Commits       []commitMark
	Breaks        []breakMark
	// Now is where the chart ends while the run still goes ("" otherwise).
	NowX string
}

type row struct {
	Y, TextY   int
	Stripe     bool
	Label      string
	Title      string
	Spend      string
	SpendTitle string
}

type tick struct {
	X     string
	Label string
}

// bar is one attempt.
type bar struct {
	ID, State    string
	X, Y, W, H   string
	TextX, TextY string
	Label        string
	Title        string
	Fallback     bool
	// FallbackPoints is the corner triangle that marks a fallback agent.
	FallbackPoints string
}

// wait is the time a step waited for a limit to lift after a limited attempt.
type wait struct {
	X, Y, W, H string
	Title      string
}

// escalationMark is where a run paused on a unit, and how long until it went on.
type escalationMark struct {
	X, Y, Y2   string
	EndX       string
	LineY      string
	Title      string
	FlagPoints string
}

// commitMark is a unit's commit.
type commitMark struct {
	Points string
	Title  string
}

// px prints a coordinate: one decimal, none when whole.
func px(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}

func buildChart(st *orchestrator.State, tl *times) chart {
	sc := newScale(tl.start, tl.end, busy(st, tl))
	c := chart{Width: chartWidth, PlotLeft: plotLeft, PlotRight: plotRight, AxisY: axisHeight}
	c.Height = axisHeight + len(st.Units)*rowHeight + 12
	c.Ticks = sc.ticks()
	c.Breaks = sc.breakMarks(c.Height)
	if tl.live {
		c.NowX = px(sc.x(tl.end))
	}
	for i, u := range st.Units {
		y := axisHeight + i*rowHeight
		c.Rows = append(c.Rows, unitRow(u, i, y))
		barY := float64(y + (rowHeight-barHeight)/2)
		for _, step := range u.Steps {
			addStep(&c, sc, tl, u, step, barY)
		}
		addEscalations(&c, sc, tl, st, u, barY)
		if m, ok := commitOf(sc, u, barY); ok {
			c.Commits = append(c.Commits, m)
		}
	}
	return c
}

func unitRow(u *orchestrator.Unit, i, y int) row {
	name := u.Dotted
	if u.Title != "" {
		name += " " + u.Title
	}
	r := row{Y: y, TextY: y + rowHeight/2 + 4, Stripe: i%2 == 1, Label: textline.Cut(name, labelChars),
		Title: fmt.Sprintf("%s (%s)", name, u.Status)}
	var t spend.Total
	if u.Usage != nil {
		t = *u.Usage
	}
	r.Spend = fmt.Sprintf("%s · %s tok", costText(t), spend.FormatTokens(t.Tokens()))
	r.SpendTitle = fmt.Sprintf("%s: %d attempts, %s tokens (input %s, output %s, cache read %s, cache write %s), cost %s",
		u.Dotted, t.Attempts, spend.FormatTokens(t.Tokens()), spend.FormatTokens(t.InputTokens),
		spend.FormatTokens(t.OutputTokens), spend.FormatTokens(t.CacheReadTokens),
		spend.FormatTokens(t.CacheWriteTokens), costText(t))
	return r
}

// addStep draws a step's attempts and the limit waits between them.
func addStep(c *chart, sc scale, tl *times, u *orchestrator.Unit, step *orchestrator.StepState, y float64) {
	for i, a := range step.Attempts {
		from, to := tl.span(a)
		x0, x1 := sc.x(from), sc.x(to)
		w := max(x1-x0, minBarW)
		state := displayState(a, tl.live)
		label := fmt.Sprintf("%s #%d", step.Name, a.N)
		retry := isRetry(step.Attempts, i)
		if retry {
			label = "↻ " + label
		}
		b := bar{ID: attemptID(u, step, a), State: state, X: px(x0), Y: px(y), W: px(w), H: px(barHeight),
			TextX: px(x0 + 4), TextY: px(y + barHeight/2 + 4), Title: attemptTitle(u, step, a, state, retry, from, to),
			Fallback: a.Role == orchestrator.RoleFallback}
		if b.Fallback {
			b.FallbackPoints = fmt.Sprintf("%s,%s %s,%s %s,%s", px(x0), px(y), px(x0+min(9, w)), px(y), px(x0), px(y+9))
		}
		b.Label = fitLabel(w, label+" · "+state, label)
		c.Bars = append(c.Bars, b)
		if a.FinalState != orchestrator.FinalLimited {
			continue
		}
		// A limited attempt's step waits until its next attempt (or, in a
		// run still waiting, until now).
		var next time.Time
		switch {
		case i+1 < len(step.Attempts):
			next, _ = parse(step.Attempts[i+1].StartedAt)
		case tl.live:
			next = tl.end
		}
		if next.After(to) && sc.x(next)-x1 >= 1 {
			c.Waits = append(c.Waits, wait{X: px(x1), Y: px(y), W: px(sc.x(next) - x1), H: px(barHeight),
				Title: fmt.Sprintf("%s %s waited %s for the %s limit (%s) to lift, %s – %s UTC", u.Dotted, step.Name,
					duration(next.Sub(to)), a.Reason, a.Agent, clock(to), clock(next))})
		}
	}
}

// fitLabel is the first of labels that surely fits in a bar w wide, or "".
func fitLabel(w float64, labels ...string) string {
	for _, l := range labels {
		if float64(len([]rune(l)))*charWidth+8 <= w {
			return l
		}
	}
	return ""
}

// isRetry: the attempt follows a failed attempt of the same review cycle.
func isRetry(as []orchestrator.Attempt, i int) bool {
	return i > 0 && as[i-1].Cycle == as[i].Cycle && as[i-1].FinalState != orchestrator.FinalCompleted &&
		as[i-1].FinalState != ""
}

func attemptTitle(u *orchestrator.Unit, step *orchestrator.StepState, a orchestrator.Attempt, state string, retry bool, from, to time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s attempt %d", u.Dotted, step.Name, a.N)
	if a.Cycle > 0 {
		fmt.Fprintf(&b, " (review cycle %d)", a.Cycle)
	}
	fmt.Fprintf(&b, ": %s", state)
	if a.Reason != "" {
		fmt.Fprintf(&b, " (%s)", a.Reason)
	}
	fmt.Fprintf(&b, "\n%s, %s", a.Agent, a.Role)
	if a.Model != "" {
		fmt.Fprintf(&b, ", %s", a.Model)
	}
	if retry {
		b.WriteString(", a retry")
	}
	fmt.Fprintf(&b, "\n%s – %s UTC (%s)", clock(from), clock(to), duration(to.Sub(from)))
	if a.Usage != nil {
		fmt.Fprintf(&b, "\n%s tokens, %s", spend.FormatTokens(a.Usage.Tokens()), spend.FormatCost(a.Usage.CostUSD))
	}
	if a.Detail != "" {
		fmt.Fprintf(&b, "\nverifier: %s", textline.OneLine(a.Detail))
	}
	return b.String()
}

// addEscalations marks each time the run paused on the unit, with a dashed
// line until the unit's next attempt (or the chart's end when none came).
func addEscalations(c *chart, sc scale, tl *times, st *orchestrator.State, u *orchestrator.Unit, y float64) {
	for _, l := range st.Log {
		if l.Unit != u.Dotted || !isEscalation(l.Message) {
			continue
		}
		at, ok := parse(l.At)
		if !ok {
			continue
		}
		end := tl.end
		if next, ok := nextStart(u, at); ok {
			end = next
		}
		x := sc.x(at)
		c.Escalations = append(c.Escalations, escalationMark{X: px(x), Y: px(y - 4), Y2: px(y + barHeight + 4),
			EndX: px(sc.x(end)), LineY: px(y + barHeight/2),
			FlagPoints: fmt.Sprintf("%s,%s %s,%s %s,%s", px(x), px(y-4), px(x+9), px(y), px(x), px(y+4)),
			Title: fmt.Sprintf("%s %s paused the run at %s UTC: %s\nit went on %s later", u.Dotted, l.Step, clock(at),
				textline.OneLine(l.Message), duration(end.Sub(at)))})
	}
}

func isEscalation(msg string) bool {
	return strings.HasPrefix(msg, "escalated: ") || strings.HasPrefix(msg, "paused before the next attempt: ")
}

// nextStart is when the unit's first attempt after t began.
func nextStart(u *orchestrator.Unit, t time.Time) (time.Time, bool) {
	var best time.Time
	for _, step := range u.Steps {
		for _, a := range step.Attempts {
			s, ok := parse(a.StartedAt)
			if ok && s.After(t) && (best.IsZero() || s.Before(best)) {
				best = s
			}
		}
	}
	return best, !best.IsZero()
}

// commitOf is a diamond where the unit's commit step was verified.
func commitOf(sc scale, u *orchestrator.Unit, y float64) (commitMark, bool) {
	step := u.Step(orchestrator.StepCommit)
	if u.Commit == "" || step == nil {
		return commitMark{}, false
	}
	at, ok := parse(step.VerifiedAt)
	if !ok {
		return commitMark{}, false
	}
	x, cy := sc.x(at), y+barHeight/2
	return commitMark{Points: fmt.Sprintf("%s,%s %s,%s %s,%s %s,%s", px(x), px(cy-6), px(x+6), px(cy), px(x), px(cy+6), px(x-6), px(cy)),
		Title: fmt.Sprintf("%s committed %s at %s UTC", u.Dotted, shortSHA(u.Commit), clock(at))}, true
}
