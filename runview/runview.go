// Package runview renders a run for people: its progress as it goes (a
// live block on a terminal, or one line of text or JSON per event), the
// dry-run plan, the run history table and one run's stories.
package runview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// Commits lists each done story's commit.
func Commits(st *orchestrator.State) []map[string]string {
	out := []map[string]string{}
	for _, u := range st.Units {
		if u.Commit != "" {
			out = append(out, map[string]string{"story": u.Dotted, "commit": u.Commit})
		}
	}
	return out
}

// WritePlan prints, for a person, what a run would do.
func WritePlan(w io.Writer, st *orchestrator.State) {
	c := st.Config
	todo := fmt.Sprintf("%d stories to do", st.StoriesRemaining())
	if c.Leftovers != nil {
		todo = fmt.Sprintf("%d units of leftovers to do", len(st.Units))
	}
	fmt.Fprintf(w, "Plan (dry run): %s · agent %s%s · parallel %d · review cycles ≤ %d · %s\n",
		todo, c.Agent, fallbackText(c.FallbackAgent), c.Parallel, c.MaxCycles,
		c.SandboxSummary())
	for _, u := range st.Units {
		if u.Status == orchestrator.StatusDone {
			continue
		}
		fmt.Fprintf(w, "  %-8s %-28s %s", u.Dotted, textline.Cut(u.Title, 28), planSteps(u))
		if len(u.DependsOn) > 0 {
			fmt.Fprintf(w, "  (after %s)", strings.Join(u.DependsOn, ", "))
		}
		fmt.Fprintln(w)
		WriteWork(w, "           ", u.Kind, u.Work)
	}
	for i, wave := range WaveKeys(st) {
		fmt.Fprintf(w, "  wave %d: %s\n", i+1, strings.Join(wave, ", "))
	}
	for _, l := range st.Log {
		fmt.Fprintf(w, "  note: %s %s\n", l.Unit, l.Message)
	}
}

// WritePlanPolicy prints, under a plan, the hosts the run would use, what
// a limit does, and the policy's warnings.
func WritePlanPolicy(w io.Writer, hosts []orchestrator.HostPlan, onLimit string, maxWait time.Duration, warnings []string) {
	var hs []string
	for _, h := range hosts {
		if h.Parallel == 0 {
			continue
		}
		s := fmt.Sprintf("%s (%d at once", h.Name, h.Parallel)
		if len(h.Agents) > 0 {
			s += "; " + strings.Join(h.Agents, ", ")
		}
		hs = append(hs, s+")")
	}
	fmt.Fprintf(w, "  hosts: %s\n", strings.Join(hs, ", "))
	fmt.Fprintf(w, "  on a usage or rate limit: %s; wait at most %s\n", onLimit, maxWait)
	for _, s := range warnings {
		fmt.Fprintf(w, "  warning: %s\n", s)
	}
}

// WriteWork lists a sweep or action unit's items (orchestrator.Work.Lines),
// each line led by indent.
func WriteWork(w io.Writer, indent, kind string, work *orchestrator.Work) {
	for _, l := range work.Lines(kind) {
		fmt.Fprintln(w, indent+l)
	}
}

func fallbackText(f string) string {
	if f == "" {
		return ""
	}
	return " (fallback " + f + ")"
}

// planSteps lists a unit's steps; finished or skipped ones are marked.
func planSteps(u *orchestrator.Unit) string {
	var parts []string
	for _, s := range u.Steps {
		switch s.Status {
		case orchestrator.StatusPending, orchestrator.StatusRunning, orchestrator.StatusEscalated:
			parts = append(parts, s.Name)
		default:
			parts = append(parts, fmt.Sprintf("[%s: %s]", s.Name, s.Status))
		}
	}
	return strings.Join(parts, " → ")
}

// WaveKeys lists the story keys of each wave the run would work in.
func WaveKeys(st *orchestrator.State) [][]string {
	out := [][]string{}
	for _, wave := range orchestrator.Waves(st) {
		var keys []string
		for _, u := range wave {
			keys = append(keys, u.Dotted)
		}
		out = append(out, keys)
	}
	return out
}

// WriteRunsTable prints the history as a table for people.
func WriteRunsTable(w io.Writer, runs []orchestrator.RunSummary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tOUTCOME\tSTORIES\tATTEMPTS\tRETRIES\tLIMITS\tAPI FAULTS\tESCALATIONS\tTOKENS\tCOST\tDURATION\tSANDBOX")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", r.RunID, shortTime(r.StartedAt), outcomeCell(r),
			r.StoriesDone, r.StoriesTotal, r.Attempts, r.Retries, r.Limits, r.APIFaults, r.Escalations, spend.FormatTokens(r.Usage.Tokens()),
			costCell(r.Usage), durationText(r.DurationMs), textline.OrDash(r.Sandbox))
	}
	tw.Flush()
}

// outcomeCell is a run's outcome; a waiting run's says until when.
func outcomeCell(r orchestrator.RunSummary) string {
	if r.Outcome != orchestrator.RunWaiting || r.Wait == nil {
		return r.Outcome
	}
	return fmt.Sprintf("waiting (%s %s, until %s, %s left)", r.Wait.Agent, r.Wait.Reason, r.Wait.UntilTime().Local().Format("15:04"),
		(time.Duration(r.WaitRemainingSeconds) * time.Second).String())
}

func costCell(t spend.Total) string {
	s := spend.FormatCost(t.CostUSD)
	if t.Unpriced > 0 || t.Unread > 0 {
		s += "+?" // some attempts have tokens without a price, or no figures at all
	}
	return s
}

func shortTime(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "—"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func durationText(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// WriteRun prints one run for a person: its summary, spend, escalation and stories.
func WriteRun(w io.Writer, st *orchestrator.State, sum orchestrator.RunSummary, path string) {
	WriteRunsTable(w, []orchestrator.RunSummary{sum})
	fmt.Fprintf(w, "\n%s\n", orchestrator.SpendText(&sum.Usage, st.Config.Budget))
	if st.Escalation != nil && st.Status == orchestrator.RunPaused {
		fmt.Fprintf(w, "paused: %s\nwhat to do: %s\n", st.Escalation.Reason, st.Escalation.Action)
	}
	if wt := st.Wait; wt != nil {
		fmt.Fprintf(w, "waiting: %s met a limit (%s); the run goes on at %s (in %s)\n", wt.Agent, wt.Reason,
			wt.UntilTime().Local().Format("2006-01-02 15:04:05"), wt.Remaining(time.Now()).Round(time.Second))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	hosts := st.RemoteHosts()
	head := "\nSTORY\tSTATUS\tATTEMPTS\tTOKENS\tCOST\tCOMMIT"
	if hosts {
		head += "\tHOST"
	}
	fmt.Fprintln(tw, head)
	for _, u := range st.Units {
		var t spend.Total
		if u.Usage != nil {
			t = *u.Usage
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s", u.Dotted, u.Status, t.Attempts, spend.FormatTokens(t.Tokens()), costCell(t), shortSHA(u.Commit))
		if hosts {
			fmt.Fprintf(tw, "\t%s", hostName(u.Host))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintf(w, "state document: %s\n", path)
	if t := st.Timeline; t != nil {
		fmt.Fprintf(w, "timeline: %s (written %s)\n", t.Path, shortTime(t.WrittenAt))
	}
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	if s == "" {
		return "—"
	}
	return s
}

// StoryRows is each story of a run with its spend, as `runs show --json` lists them.
func StoryRows(st *orchestrator.State) []map[string]any {
	rows := []map[string]any{}
	for _, u := range st.Units {
		rows = append(rows, map[string]any{"story": u.Dotted, "kind": u.Kind, "title": u.Title, "status": u.Status,
			"commit": u.Commit, "usage": u.Usage, "host": hostName(u.Host)})
	}
	return rows
}

// hostName is a unit's host; a unit of a run from before hosts ran here.
func hostName(h string) string {
	if h == "" {
		return orchestrator.LocalHost
	}
	return h
}
