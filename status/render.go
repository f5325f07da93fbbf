package status

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
	"github.com/story-automator/story-automator/workflows"
)

// RedrawFrame turns a text frame into one that overwrites the previous frame
// in place: cursor home, each line cleared to its end as it is written, and
// whatever the last frame left below erased. Nothing blanks the whole screen,
// so there is no flicker between frames.
func RedrawFrame(text string) string {
	var b strings.Builder
	b.WriteString("\x1b[H")
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		b.WriteString(strings.TrimSuffix(line, "\n") + "\x1b[K")
		if strings.HasSuffix(line, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("\x1b[J")
	return b.String()
}

// WriteFrame writes the view as text; a frame of --watch (redraw) overwrites
// the one before it in place.
func WriteFrame(w io.Writer, v View, now time.Time, redraw bool) {
	if !redraw {
		WriteText(w, v, now)
		return
	}
	var frame strings.Builder
	WriteText(&frame, v, now)
	_, _ = io.WriteString(w, RedrawFrame(frame.String()))
}

// WriteText writes the view for a person: the run, its stories and steps,
// the marker, live sessions and the hook's last decision.
func WriteText(w io.Writer, v View, now time.Time) {
	if r := v.Run; r != nil {
		fmt.Fprintf(w, "Run %s · %s · %d/%d stories done · updated %s\n", r.RunID, r.Status, r.StoriesDone, r.StoriesTotal, ago(r.UpdatedAt, now))
		fmt.Fprintf(w, "Spend: %s\n", orchestrator.SpendText(r.Usage, r.Budget))
		fmt.Fprintf(w, "Children: %s\n", strings.Join(append([]string{orchestrator.SandboxText(r.Sandbox, r.SandboxNetwork)}, r.SandboxExceptions...), "; "))
		fmt.Fprintf(w, "State document: %s\n", r.StateFile)
		if r.Wait != nil {
			st := r.Status
			if st == orchestrator.RunWaiting && !v.Orchestrator.RunLock {
				st = orchestrator.RunPaused // killed while it waited: only --resume goes on
			}
			fmt.Fprintln(w, WaitText(&r.Wait.LimitWait, st, now))
		}
	} else {
		fmt.Fprintln(w, "No run in this project yet (start one with `story-automator run`).")
	}
	writePipeline(w, v)
	writeActionItems(w, v.ActionItems)
	writeOrchestrator(w, v)
	writeMarker(w, v.Marker, now)
	if r := v.Run; r != nil {
		fmt.Fprintln(w, "Stories:")
		for _, u := range r.Units {
			fmt.Fprintf(w, "  %-8s %-9s %s%s%s\n", u.Story, u.Status, stepMarks(u), commitText(u.Commit), unitSpend(u.Usage))
			if u.Host != "" && u.Host != orchestrator.LocalHost {
				fmt.Fprintf(w, "           on host %s\n", u.Host)
			}
			if u.Worktree != "" {
				fmt.Fprintf(w, "           worktree %s\n", u.Worktree)
			}
			writeRetro(w, u.Retro)
			for _, l := range u.Work.Lines(u.Kind) {
				fmt.Fprintln(w, "           "+l)
			}
			writeParked(w, u.Parked)
		}
		if r.Status == orchestrator.RunInterrupted {
			fmt.Fprintf(w, "Interrupted: the run's process is gone — resume with `%s`\n", r.Resume)
		} else if r.Escalation != nil {
			fmt.Fprintf(w, "Escalated: %s\n  what to do: %s\n", r.Escalation.Reason, r.Escalation.Action)
		} else if r.PauseReason != "" && r.Status != orchestrator.RunDone {
			fmt.Fprintf(w, "Paused: %s\n", r.PauseReason)
		}
	}
	fmt.Fprintf(w, "Live sessions: %d\n", len(v.Sessions))
	for _, s := range v.Sessions {
		fmt.Fprintf(w, "  %s  %s %s  %s  %s", s.Session, s.Story, s.Step, textline.OrDash(s.Agent), textline.OrDash(s.Lifecycle))
		if s.Host != "" {
			fmt.Fprintf(w, "  on %s", s.Host)
		}
		fmt.Fprintln(w)
	}
	if d := v.LastDecision; d != nil {
		fmt.Fprintf(w, "Last hook decision: %s, %s: %s\n", d.Decision, ago(d.At, now), textline.Cut(textline.OneLine(d.Reason), 100))
	} else {
		fmt.Fprintln(w, "Last hook decision: none")
	}
}

// writeParked says why a story is parked, what to do and where its work is.
func writeParked(w io.Writer, p *orchestrator.Parked) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "           parked at %s: %s\n           what to do: %s\n", p.Step, p.Reason, p.Action)
	if p.Ref != "" {
		fmt.Fprintf(w, "           its work: %s\n", p.Ref)
	}
}

// writeRetro says a retrospective's verdict and, when it accepted the epic
// with open items, lists them.
func writeRetro(w io.Writer, r *orchestrator.RetroVerdict) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "           verdict %s (%s)\n", r.Verdict, r.Document)
	if r.OpenItems() {
		fmt.Fprintln(w, "           open action items:")
		for _, it := range r.ActionItems {
			fmt.Fprintf(w, "             - %s\n", it)
		}
	}
}

// writePipeline says which pipeline a run takes and why, and what the
// project's BMAD files disagree on.
func writePipeline(w io.Writer, v View) {
	switch c := v.Pipeline; {
	case c != nil:
		fmt.Fprintf(w, "Pipeline: %s\n", c)
		for _, warn := range c.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", warn)
		}
	case v.PipelineError != "":
		fmt.Fprintf(w, "Pipeline: unknown (%s)\n", v.PipelineError)
	}
}

func writeOrchestrator(w io.Writer, v View) {
	o := v.Orchestrator
	switch {
	case o.Pid > 0 && o.Alive:
		fmt.Fprintf(w, "Orchestrator: running (pid %d)\n", o.Pid)
	case o.Pid > 0 && v.Marker.Marker != nil && v.Marker.Marker.Status == marker.StatusActive:
		fmt.Fprintf(w, "Orchestrator: pid %d is gone — resume with `story-automator run --resume`\n", o.Pid)
	case o.RunLock:
		fmt.Fprintln(w, "Orchestrator: a run holds the run lock")
	default:
		fmt.Fprintln(w, "Orchestrator: not running")
	}
}

func writeMarker(w io.Writer, sm MarkerInfo, now time.Time) {
	m := sm.Marker
	switch {
	case sm.Error != "":
		fmt.Fprintf(w, "Marker: unreadable (%s)\n", sm.Error)
	case m == nil:
		fmt.Fprintf(w, "Marker: none (%s)\n", sm.Path)
	default:
		fmt.Fprintf(w, "Marker: %s %s · story %s · step %s · %d remaining · heartbeat %s · owner session %s",
			m.Status, m.Mode, textline.OrDash(m.CurrentStory), textline.OrDash(m.CurrentStep), m.StoriesRemaining,
			ago(m.Heartbeat, now), textline.OrDash(m.OwnerSession))
		if m.PauseReason != "" {
			fmt.Fprintf(w, " · paused: %s", textline.Cut(textline.OneLine(m.PauseReason), 80))
		}
		if m.Waiting != nil {
			fmt.Fprintf(w, " · waiting (%s, %s) until %s", m.Waiting.Agent, m.Waiting.Reason, clockTime(m.Waiting.ResumesAt))
		}
		fmt.Fprintln(w)
	}
}

// stepMarks shows each step with its StepMark.
func stepMarks(u Unit) string {
	var parts []string
	for _, s := range u.Steps {
		parts = append(parts, s.Name+" "+StepMark(s.Status))
	}
	return strings.Join(parts, "  ")
}

var stepMarkOf = map[string]string{orchestrator.StatusVerified: "✓", orchestrator.StatusSkipped: "–",
	orchestrator.StatusFailed: "✗", orchestrator.StatusEscalated: "!", orchestrator.StatusRunning: "▶"}

// StepMark is how status shows a step's status: ✓ verified, – skipped,
// ✗ failed (optional), ! escalated, ▶ running, · pending.
func StepMark(status string) string {
	if mark, ok := stepMarkOf[status]; ok {
		return mark
	}
	return "·"
}

// unitSpend is a story's cost and tokens, or nothing before its first attempt ends.
func unitSpend(t *spend.Total) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("  %s · %s tokens", spend.FormatCost(t.CostUSD), spend.FormatTokens(t.Tokens()))
}

func commitText(sha string) string {
	if len(sha) > 7 {
		return "  " + sha[:7]
	}
	return ""
}

// ago says how long ago a marker timestamp was.
func ago(ts string, now time.Time) string {
	t, ok := marker.ParseTime(ts)
	if !ok {
		return "—"
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String() + " ago"
}

// WaitText is one line on a run's wait for a limit to lift, with a
// countdown: who met which limit, and when the run goes on by itself (or,
// for a run that was stopped while it waited, may go on with --resume).
func WaitText(wt *orchestrator.LimitWait, runStatus string, now time.Time) string {
	until := wt.UntilTime()
	left := wt.Remaining(now).Round(time.Second)
	reset := ""
	if wt.ResetsAt != "" {
		reset = ", it lifts at " + clockTime(wt.ResetsAt)
	}
	if runStatus != orchestrator.RunWaiting {
		if left <= 0 {
			return fmt.Sprintf("Limit: %s met a limit (%s)%s; it is over — `story-automator run --resume` goes on at once", wt.Agent, wt.Reason, reset)
		}
		return fmt.Sprintf("Limit: %s met a limit (%s)%s; `story-automator run --resume` waits the rest, until %s (%s)",
			wt.Agent, wt.Reason, reset, clockTime(marker.Timestamp(until)), left)
	}
	return fmt.Sprintf("Waiting: %s met a limit (%s)%s; the run goes on by itself at %s (in %s)", wt.Agent, wt.Reason, reset,
		clockTime(marker.Timestamp(until)), left)
}

// clockTime is a marker timestamp as people read it: "2026-01-02 17:00:10 UTC".
func clockTime(ts string) string {
	t, ok := marker.ParseTime(ts)
	if !ok {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// writeActionItems lists the board's action items not yet done, which
// `run --action-items` takes up.
func writeActionItems(w io.Writer, items []workflows.ActionItem) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "Action items on the board (%d not done; `story-automator run --action-items` takes them up):\n", len(items))
	for _, a := range items {
		line := fmt.Sprintf("  %s [%s] %s", a.ID, a.Status, textline.Cut(textline.OneLine(a.Action), 80))
		if a.Owner != "" {
			line += " (owner: " + a.Owner + ")"
		}
		fmt.Fprintln(w, line)
	}
}
