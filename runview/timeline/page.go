// Package timeline draws a run as one self-contained HTML page: an SVG
// timeline of its attempts, each story's spend and the attempts table.
package timeline

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"time"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// Options are what the page needs besides the state.
type Options struct {
	// Live says the run's orchestrator still goes: attempts with no end
	// then run until Now. A run that is not live never reads Now, so its
	// page is the same whenever it is drawn.
	Live bool
	Now  time.Time
	// StateFile is the state document the page was drawn from.
	StateFile string
}

//go:embed page.html.tmpl
var pageSource string

var pageTemplate = template.Must(template.New("page").Parse(pageSource))

// page is what the template shows.
type page struct {
	RunID      string
	Status     string
	Facts      []fact
	Escalation *escalation
	Chart      chart
	Legend     []legendItem
	LegendH    int
	Stories    []storyRow
	Attempts   []attemptRow
	StateFile  string
}

type fact struct{ Name, Value string }

// escalation is why a paused run paused and what to do.
type escalation struct{ At, Reason, Action string }

// legendItem is one entry of the legend: a state's colour, or one of the
// chart's marks (Kind names which), at X, Y in the legend's SVG.
type legendItem struct {
	Kind, State, Label, Meaning string
	X, Y                        int
}

type storyRow struct {
	Story, Title, Status                 string
	Attempts                             int
	Input, Output, CacheRead, CacheWrite string
	Tokens, Cost, Commit                 string
}

type attemptRow struct {
	ID, Story, Step, Attempt, Agent, Role, Model string
	State, Reason, Start, Duration               string
	Tokens, Cost, Verifier, Commit               string
	// UsageNote says why an attempt has no figures.
	UsageNote string
}

// Write draws the run as an HTML page on w.
func Write(w io.Writer, st *orchestrator.State, opt Options) error {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, build(st, opt)); err != nil {
		return fmt.Errorf("draw the timeline of run %s: %w", st.RunID, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Render is the page as bytes.
func Render(st *orchestrator.State, opt Options) ([]byte, error) {
	var b bytes.Buffer
	err := Write(&b, st, opt)
	return b.Bytes(), err
}

func build(st *orchestrator.State, opt Options) page {
	tl := runTimes(st, opt)
	// A run nobody carries on (not live) whose document says running or
	// waiting is interrupted.
	sum := orchestrator.SummarizeSeen(st, opt.StateFile, opt.Live)
	p := page{RunID: st.RunID, Status: sum.Outcome, Chart: buildChart(st, tl), StateFile: opt.StateFile}
	p.Legend, p.LegendH = legend(st, tl.live)
	p.Facts = []fact{
		{"status", sum.Outcome},
		{"stories", fmt.Sprintf("%d of %d done", sum.StoriesDone, sum.StoriesTotal)},
		{"attempts", fmt.Sprintf("%d (%s, %s)", sum.Attempts, plural(sum.Retries, "retry", "retries"),
			plural(sum.Escalations, "escalation", "escalations"))},
		{"spend", orchestrator.SpendText(&sum.Usage, st.Config.Budget)},
		{"started", stamp(st.StartedAt)},
		{"time running", duration(time.Duration(sum.DurationMs) * time.Millisecond)},
		{"agents", agentsText(st.Config)},
	}
	if st.FinishedAt != "" {
		p.Facts = append(p.Facts, fact{"finished", stamp(st.FinishedAt)})
	} else if tl.live {
		p.Facts = append(p.Facts, fact{"drawn (the run goes on)", stamp(tl.end.Format(time.RFC3339))})
	}
	if e := st.Escalation; e != nil && st.Status == orchestrator.RunPaused {
		p.Escalation = &escalation{At: stamp(e.At), Reason: e.Reason, Action: e.Action}
	}
	for _, u := range st.Units {
		p.Stories = append(p.Stories, storyRowOf(u))
	}
	p.Attempts = attemptRows(st, tl)
	return p
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func agentsText(c orchestrator.RunConfig) string {
	s := c.Agent
	if c.FallbackAgent != "" {
		s += ", fallback " + c.FallbackAgent
	}
	return fmt.Sprintf("%s · parallel %d", s, c.Parallel)
}

// stateMeanings are the legend's colours: every final state an attempt
// can end in, and one still going.
var stateMeanings = [][2]string{
	{orchestrator.FinalCompleted, "done and verified"},
	{orchestrator.FinalIncomplete, "ended, work not verified"},
	{orchestrator.FinalCrashed, "the agent exited or died"},
	{orchestrator.FinalStuck, "no progress, or a dialog"},
	{orchestrator.FinalTimeout, "ran out of time"},
	{orchestrator.FinalLimited, "usage or rate limit, API fault"},
	{orchestrator.FinalInterrupted, "stopped by the run"},
	{orchestrator.FinalError, "could not start"},
	{orchestrator.FinalNotFound, "session gone"},
	{stateRunning, "still going"},
}

// The legend's grid.
const (
	legendColumns = 8
	legendColumnW = 142
	legendRowH    = 22
)

// legend lists every state ("unfinished" only when the run has one), then
// the chart's marks.
func legend(st *orchestrator.State, live bool) ([]legendItem, int) {
	var out []legendItem
	for _, m := range stateMeanings {
		out = append(out, legendItem{Kind: "state", State: m[0], Label: m[0], Meaning: m[1]})
	}
	unfinished := false
	each(st, func(_ *orchestrator.Unit, _ *orchestrator.StepState, a orchestrator.Attempt) {
		unfinished = unfinished || displayState(a, live) == stateUnfinished
	})
	if unfinished {
		out = append(out, legendItem{Kind: "state", State: stateUnfinished, Label: stateUnfinished, Meaning: "no end recorded"})
	}
	out = append(out,
		legendItem{Kind: "wait", Label: "limit wait", Meaning: "the step waited for a limit to lift"},
		legendItem{Kind: "fallback", Label: "fallback agent", Meaning: "the attempt ran the fallback agent"},
		legendItem{Kind: "retry", Label: "↻ retry", Meaning: "the attempt retried a failed one"},
		legendItem{Kind: "escalation", Label: "escalation", Meaning: "the run paused here until someone resumed it"},
		legendItem{Kind: "commit", Label: "commit", Meaning: "the story's commit"})
	for i := range out {
		out[i].X, out[i].Y = (i%legendColumns)*legendColumnW, (i/legendColumns)*legendRowH
	}
	return out, (len(out)+legendColumns-1)/legendColumns*legendRowH + 4
}

func storyRowOf(u *orchestrator.Unit) storyRow {
	var t spend.Total
	if u.Usage != nil {
		t = *u.Usage
	}
	return storyRow{Story: u.Dotted, Title: u.Title, Status: u.Status, Attempts: t.Attempts,
		Input: spend.FormatTokens(t.InputTokens), Output: spend.FormatTokens(t.OutputTokens),
		CacheRead: spend.FormatTokens(t.CacheReadTokens), CacheWrite: spend.FormatTokens(t.CacheWriteTokens),
		Tokens: spend.FormatTokens(t.Tokens()), Cost: costText(t), Commit: textline.OrDash(shortSHA(u.Commit))}
}

// attemptRows are the attempts in the order they started (a stable sort of
// the units' order, so equal times keep one order).
func attemptRows(st *orchestrator.State, tl *times) []attemptRow {
	type started struct {
		at  time.Time
		row attemptRow
	}
	var all []started
	for _, u := range st.Units {
		last := lastAttemptID(u)
		for _, step := range u.Steps {
			for _, a := range step.Attempts {
				from, _ := tl.span(a)
				all = append(all, started{from, attemptRowOf(u, step, a, tl, attemptID(u, step, a) == last)})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	rows := make([]attemptRow, len(all))
	for i, s := range all {
		rows[i] = s.row
	}
	return rows
}

func attemptRowOf(u *orchestrator.Unit, step *orchestrator.StepState, a orchestrator.Attempt, tl *times, last bool) attemptRow {
	from, to := tl.span(a)
	r := attemptRow{ID: attemptID(u, step, a), Story: u.Dotted, Step: step.Name, Attempt: fmt.Sprint(a.N),
		Agent: a.Agent, Role: a.Role, Model: textline.OrDash(a.Model), State: displayState(a, tl.live),
		Reason: textline.OrDash(a.Reason), Start: from.Format("15:04:05"), Duration: duration(to.Sub(from)),
		Tokens: "—", Cost: "—", Verifier: textline.OrDash(verifierText(a)), Commit: "—"}
	if a.Cycle > 0 {
		r.Attempt += fmt.Sprintf(" (cycle %d)", a.Cycle)
	}
	if a.Usage != nil {
		r.Tokens, r.Cost = spend.FormatTokens(a.Usage.Tokens()), spend.FormatCost(a.Usage.CostUSD)
	} else {
		r.UsageNote = a.UsageNote
	}
	if last && u.Commit != "" {
		r.Commit = shortSHA(u.Commit)
	}
	return r
}

func verifierText(a orchestrator.Attempt) string {
	switch {
	case a.Verifier != "" && a.Detail != "":
		return a.Verifier + ": " + textline.OneLine(a.Detail)
	case a.Detail != "":
		return textline.OneLine(a.Detail)
	}
	return a.Verifier
}

// lastAttemptID is the unit's attempt that started last: the one whose
// work its commit took.
func lastAttemptID(u *orchestrator.Unit) string {
	var id, at string
	for _, step := range u.Steps {
		for _, a := range step.Attempts {
			if a.StartedAt >= at {
				id, at = attemptID(u, step, a), a.StartedAt
			}
		}
	}
	return id
}
