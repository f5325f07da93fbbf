package orchestrator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/internal/textline"
	"github.com/story-automator/story-automator/spend"
)

// The state document is markdown for people with the machine state in a
// fenced JSON block at its end, so one atomic write keeps both in step.
const (
	machineHeading = "## Machine state"
	machineFence   = "```json story-automator-state"
)

// ErrNoMachineState means a file is not a state document this tool wrote.
var ErrNoMachineState = errors.New("no machine state block")

// ErrStateCorrupt means a state document, or a line of its journal, cannot
// be read back: no machine state block, or one that is not the JSON this
// tool writes. (A document of another state version is not corrupt.)
var ErrStateCorrupt = errors.New("the run's state document is corrupt")

// SaveState writes the state document atomically, mode 0600, and drops its
// journal (see journal.go).
func SaveState(path string, s *State) error {
	data, err := RenderState(s)
	if err != nil {
		return err
	}
	if err := atomicfile.EnsureDir(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return err
	}
	// The document holds every change now; its journal has nothing more.
	if err := os.Remove(JournalPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drop run journal: %w", err)
	}
	return nil
}

// LoadState reads the machine state back from a state document and the
// changes its journal holds since.
func LoadState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read run state: %w", err)
	}
	s, err := ParseState(path, data)
	if err != nil {
		return nil, err
	}
	if err := replayJournal(path, s); err != nil {
		return nil, err
	}
	s.tally()
	return s, nil
}

// ParseState extracts the machine state from a state document's bytes.
func ParseState(path string, data []byte) (*State, error) {
	i := bytes.LastIndex(data, []byte("\n"+machineFence+"\n"))
	if i < 0 {
		return nil, fmt.Errorf("%w: %s: %w", ErrStateCorrupt, path, ErrNoMachineState)
	}
	body := data[i+len(machineFence)+2:]
	end := bytes.Index(body, []byte("\n```"))
	if end < 0 {
		return nil, fmt.Errorf("%w: %s: unterminated machine state block", ErrStateCorrupt, path)
	}
	var s State
	if err := json.Unmarshal(body[:end], &s); err != nil {
		return nil, fmt.Errorf("%w: %s: machine state: %v", ErrStateCorrupt, path, err)
	}
	if s.Version != StateVersion {
		return nil, fmt.Errorf("%s: machine state version %d, want %d", path, s.Version, StateVersion)
	}
	return &s, nil
}

// RenderState renders the whole state document.
func RenderState(s *State) ([]byte, error) {
	s.tally()
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode run state: %w", err)
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	renderSummary(w, s)
	renderProgress(w, s)
	renderEscalation(w, s)
	renderParked(w, s)
	renderLog(w, s)
	fmt.Fprintf(w, "%s\n\n<!-- Written by story-automator after every step; `story-automator run --resume` continues from it. Do not edit. -->\n\n", machineHeading)
	fmt.Fprintf(w, "%s\n%s\n```\n", machineFence, js)
	w.Flush()
	return b.Bytes(), nil
}

func renderSummary(w *bufio.Writer, s *State) {
	done, total := s.StoryCounts()
	fmt.Fprintf(w, "# Story run %s\n\n", s.RunID)
	fmt.Fprintf(w, "**Status: %s** — %d of %d stories done. Started %s, updated %s", s.Status, done, total,
		humanTime(s.StartedAt), humanTime(s.UpdatedAt))
	if s.FinishedAt != "" {
		fmt.Fprintf(w, ", finished %s", humanTime(s.FinishedAt))
	}
	fmt.Fprint(w, ".\n\n")
	fmt.Fprintf(w, "**Spend:** %s.\n\n", SpendText(s.Usage, s.Config.Budget))
	if t := s.Timeline; t != nil {
		fmt.Fprintf(w, "**Timeline:** `%s` (HTML, written %s: the run as it stood then; `story-automator runs show %s --html FILE` draws it again).\n\n",
			t.Path, humanTime(t.WrittenAt), s.RunID)
	}
	renderWait(w, s)
	if s.PauseReason != "" && s.Escalation == nil {
		fmt.Fprintf(w, "Paused: %s. Continue with `story-automator run --resume`.\n\n", s.PauseReason)
	}
	c := s.Config
	fmt.Fprint(w, "## Configuration\n\n| setting | value |\n| --- | --- |\n")
	rows := [][2]string{
		{"project", s.ProjectRoot},
		{"epic", textline.OrDash(c.Epic)},
		{"stories", c.Stories},
		{"agent", c.Agent},
		{"fallback agent", textline.OrDash(c.FallbackAgent)},
		{"parallel", fmt.Sprint(c.Parallel)},
		{"max review cycles", fmt.Sprint(c.MaxCycles)},
		{"model", textline.OrDash(c.Model)},
		{"sandbox", c.SandboxSummary()},
		{"retry backoff", orDefault(c.Backoff.String(), "each step's policy")},
		{"max wait for a limit", orDefault(c.MaxWait.String(), "workflow.yaml's maxWait, else 6h")},
		{"completion rechecks", orDefault(strconv.Itoa(c.CompletionRechecks), "the monitor's default")},
		{"recheck grace", orDefault(c.RecheckGrace.String(), "the monitor's default")},
		{"owner session", textline.OrDash(c.OwnerSession)},
		{"marker", c.MarkerFile},
		{"state document", c.StateFile},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s |\n", r[0], cell(r[1]))
	}
	fmt.Fprintln(w)
}

func renderProgress(w *bufio.Writer, s *State) {
	fmt.Fprint(w, "## Progress\n\n| story | title | create | dev | automate | review | commit | status | spend |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	var retros []*Unit
	for _, u := range s.Units {
		if u.Kind == KindRetro {
			retros = append(retros, u)
			continue
		}
		fmt.Fprintf(w, "| %s | %s |", u.Dotted, cell(u.Title))
		for _, name := range StorySteps() {
			fmt.Fprintf(w, " %s |", cell(stepCell(u.Step(name))))
		}
		fmt.Fprintf(w, " %s | %s |\n", u.Status+u.hostNote(), cell(totalCell(u.Usage)))
	}
	if len(retros) > 0 {
		fmt.Fprint(w, "\n| epic | retrospective | commit | status |\n| --- | --- | --- | --- |\n")
		for _, u := range retros {
			status := u.Status
			if u.Retro != nil {
				status += fmt.Sprintf(" · verdict %s (%s)", u.Retro.Verdict, u.Retro.Document)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", u.Epic, cell(stepCell(u.Step(StepRetro))), cell(stepCell(u.Step(StepCommit))), cell(status))
		}
	}
	fmt.Fprintln(w)
}

// totalCell is a spend cell: cost and tokens, "—" before any attempt ended.
func totalCell(t *spend.Total) string {
	if t == nil {
		return "—"
	}
	return fmt.Sprintf("%s · %s tokens", spend.FormatCost(t.CostUSD), spend.FormatTokens(t.Tokens()))
}

// stepCell is one progress-table cell: the status, attempts, cycles, note.
func stepCell(st *StepState) string {
	if st == nil {
		return "—"
	}
	s := st.Status
	var extra []string
	if n := len(st.Attempts); n > 1 {
		extra = append(extra, fmt.Sprintf("%d attempts", n))
	}
	if st.Name == StepReview {
		if a := st.lastFinished(); a != nil && a.Cycle > 1 {
			extra = append(extra, fmt.Sprintf("cycle %d", a.Cycle))
		}
	}
	if limits, faults := limitedCounts(st); limits+faults > 0 {
		if limits > 0 {
			extra = append(extra, fmt.Sprintf("%d limited", limits))
		}
		if faults > 0 {
			extra = append(extra, fmt.Sprintf("%d API faults", faults))
		}
	}
	if st.Status == StatusRunning && len(st.Attempts) > 0 {
		a := st.Attempts[len(st.Attempts)-1]
		extra = append(extra, a.Agent)
	}
	if st.Note != "" && st.Status != StatusEscalated {
		extra = append(extra, st.Note)
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}

func renderEscalation(w *bufio.Writer, s *State) {
	e := s.Escalation
	if e == nil {
		return
	}
	fmt.Fprintf(w, "## Escalation\n\nThe run paused at %s.\n\n- **Why:** %s\n- **What to do:** %s\n\n", humanTime(e.At), e.Reason, e.Action)
}

// renderParked lists the parked stories: why, what to do, where their work is.
func renderParked(w *bufio.Writer, s *State) {
	first := true
	for _, u := range s.Units {
		p := u.Parked
		if u.Status != StatusParked || p == nil {
			continue
		}
		if first {
			fmt.Fprint(w, "## Parked\n\nThe run went on without these; `story-automator run --resume` takes them up again.\n\n")
			first = false
		}
		fmt.Fprintf(w, "### %s\n\nParked at %s, at its %s step.\n\n- **Why:** %s\n- **What to do:** %s\n", u.Dotted, humanTime(p.At), p.Step, p.Reason, p.Action)
		if p.Ref != "" {
			fmt.Fprintf(w, "- **Its work:** `%s`\n", p.Ref)
		}
		fmt.Fprint(w, "\n")
	}
}

func renderLog(w *bufio.Writer, s *State) {
	fmt.Fprint(w, "## Action log\n\n")
	for _, l := range s.Log {
		where := strings.TrimSpace(l.Unit + " " + l.Step)
		if where != "" {
			where = "**" + where + "** "
		}
		fmt.Fprintf(w, "- %s %s%s\n", humanTime(l.At), where, textline.OneLine(l.Message))
	}
	fmt.Fprintln(w)
}

func humanTime(ts string) string {
	if len(ts) >= 19 {
		return strings.Replace(ts[:19], "T", " ", 1) + " UTC"
	}
	return textline.OrDash(ts)
}

func orDefault(s, def string) string {
	if s == "" || s == "0" {
		return def
	}
	return s
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(textline.OneLine(s), "|", `\|`)
}

// renderWait says, while the run waits on a limit (or was stopped in such a
// wait), whose limit, why, and when the run goes on.
func renderWait(w *bufio.Writer, s *State) {
	wt := s.Wait
	if wt == nil {
		return
	}
	reset := "did not say when it lifts"
	if wt.ResetsAt != "" {
		reset = "said it lifts at " + humanTime(wt.ResetsAt)
	}
	fmt.Fprintf(w, "**Waiting:** %s met a limit (%s) in %s %s and %s; the run goes on by itself at %s (waiting since %s). "+
		"No agent runs meanwhile.\n\n", wt.Agent, wt.Reason, wt.Unit, wt.Step, reset, humanTime(wt.Until), humanTime(wt.Since))
}

// limitedCounts is how many of a step's attempts a usage or rate limit
// stopped, and how many an API fault did.
func limitedCounts(st *StepState) (limits, faults int) {
	for _, a := range st.Attempts {
		switch {
		case IsAPIFault(a):
			faults++
		case a.FinalState == FinalLimited:
			limits++
		}
	}
	return limits, faults
}
