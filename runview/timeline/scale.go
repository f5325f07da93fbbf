package timeline

import (
	"fmt"
	"sort"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

// A run can stand still for hours (an escalation overnight, a long limit
// wait): drawn to scale, its attempts would be slivers. So a long stretch
// in which no attempt ran is cut to a fixed width, marked as a break.
const (
	// A stretch with no attempt is cut when it is this long and at least
	// cutShare of the run.
	minCut   = 30 * time.Minute
	cutShare = 4 // one quarter
	cutWidth = 44.0
)

// segment is a stretch of the run on the axis: drawn to scale, or cut.
type segment struct {
	from, to time.Time
	x0, x1   float64
	cut      bool
}

// scale maps times onto the plot's x axis, segment by segment.
type scale struct{ segs []segment }

// busy is when each attempt ran.
func busy(st *orchestrator.State, tl *times) [][2]time.Time {
	var out [][2]time.Time
	each(st, func(_ *orchestrator.Unit, _ *orchestrator.StepState, a orchestrator.Attempt) {
		from, to := tl.span(a)
		out = append(out, [2]time.Time{from, to})
	})
	return out
}

// newScale spans start to end on the plot, cutting the long stretches
// between the busy ones.
func newScale(start, end time.Time, busy [][2]time.Time) scale {
	span := end.Sub(start)
	var segs []segment
	at, kept := start, span
	for _, gap := range idle(start, end, busy) {
		d := gap[1].Sub(gap[0])
		if d < minCut || d*cutShare < span {
			continue
		}
		if at.Before(gap[0]) {
			segs = append(segs, segment{from: at, to: gap[0]})
		}
		segs = append(segs, segment{from: gap[0], to: gap[1], cut: true})
		at, kept = gap[1], kept-d
	}
	if at.Before(end) || len(segs) == 0 {
		segs = append(segs, segment{from: at, to: end})
	}
	cuts := 0
	for _, s := range segs {
		if s.cut {
			cuts++
		}
	}
	width := float64(plotRight-plotLeft) - cutWidth*float64(cuts)
	x := float64(plotLeft)
	for i := range segs {
		s := &segs[i]
		s.x0 = x
		switch {
		case s.cut:
			x += cutWidth
		case kept > 0:
			x += width * float64(s.to.Sub(s.from)) / float64(kept)
		}
		s.x1 = x
	}
	segs[len(segs)-1].x1 = max(segs[len(segs)-1].x1, float64(plotRight))
	return scale{segs: segs}
}

// idle are the stretches between start and end in which nothing in busy ran.
func idle(start, end time.Time, busy [][2]time.Time) [][2]time.Time {
	sorted := append([][2]time.Time(nil), busy...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i][0].Before(sorted[j][0]) })
	var out [][2]time.Time
	at := start
	for _, b := range sorted {
		if b[0].After(at) {
			out = append(out, [2]time.Time{at, b[0]})
		}
		if b[1].After(at) {
			at = b[1]
		}
	}
	if end.After(at) {
		out = append(out, [2]time.Time{at, end})
	}
	return out
}

func (s scale) x(t time.Time) float64 {
	for _, g := range s.segs {
		if t.After(g.to) {
			continue
		}
		if !t.After(g.from) {
			return g.x0
		}
		return g.x0 + (g.x1-g.x0)*float64(t.Sub(g.from))/float64(g.to.Sub(g.from))
	}
	return s.segs[len(s.segs)-1].x1
}

// breakMark is a cut stretch: a band across the rows, labelled with its length.
type breakMark struct {
	X, W, LabelX string
	Height       int
	Label, Title string
}

func (s scale) breakMarks(height int) []breakMark {
	var out []breakMark
	for _, g := range s.segs {
		if g.cut {
			out = append(out, breakMark{X: px(g.x0), W: px(g.x1 - g.x0), LabelX: px((g.x0 + g.x1) / 2), Height: height,
				Label: duration(g.to.Sub(g.from)),
				Title: fmt.Sprintf("no attempt ran for %s, %s – %s UTC: drawn shorter than to scale",
					duration(g.to.Sub(g.from)), g.from.Format("Jan 2 15:04:05"), g.to.Format("Jan 2 15:04:05"))})
		}
	}
	return out
}

// breakLabelW is the width a break's label (its length: 9h17m) takes.
const breakLabelW = 48.0

// nearBreak reports whether a tick label at x would touch a break's label.
func (s scale) nearBreak(x, gap float64) bool {
	for _, g := range s.segs {
		if c := (g.x0 + g.x1) / 2; g.cut && x > c-breakLabelW/2-gap/2 && x < c+breakLabelW/2+gap/2 {
			return true
		}
	}
	return false
}

// tickSteps are the intervals the axis may be labelled in.
var tickSteps = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second,
	30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
	48 * time.Hour, 7 * 24 * time.Hour}

// ticks labels the axis at round times of the stretches drawn to scale,
// at most about ten, none crowding the one before.
func (s scale) ticks() []tick {
	var kept time.Duration
	for _, g := range s.segs {
		if !g.cut {
			kept += g.to.Sub(g.from)
		}
	}
	step := tickSteps[len(tickSteps)-1]
	for _, d := range tickSteps {
		if kept/d <= 10 {
			step = d
			break
		}
	}
	first, last := s.segs[0].from, s.segs[len(s.segs)-1].to
	layout := "15:04"
	switch {
	case first.YearDay() != last.YearDay() || first.Year() != last.Year():
		layout = "Jan 2 15:04"
	case step < time.Minute:
		layout = "15:04:05"
	}
	gap := float64(len(layout))*6.5 + 10
	var out []tick
	lastX := -gap
	for _, g := range s.segs {
		if g.cut {
			// The break's own label stands where its band is.
			lastX = (g.x0+g.x1)/2 + breakLabelW/2
			continue
		}
		for t := g.from.Truncate(step); !t.After(g.to); t = t.Add(step) {
			x := s.x(t)
			if t.Before(g.from) || x-lastX < gap || s.nearBreak(x, gap) {
				continue
			}
			out = append(out, tick{X: px(x), Label: t.UTC().Format(layout)})
			lastX = x
		}
	}
	return out
}
