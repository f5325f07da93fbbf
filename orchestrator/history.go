package orchestrator

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/story-automator/story-automator/spend"
)

// RunSummary is one run of a project's history, from its state document.
type RunSummary struct {
	RunID        string      `json:"runId"`
	StartedAt    string      `json:"startedAt"`
	FinishedAt   string      `json:"finishedAt,omitempty"`
	Outcome      string      `json:"outcome"`
	StoriesDone  int         `json:"storiesDone"`
	StoriesTotal int         `json:"storiesTotal"`
	Attempts     int         `json:"attempts"`
	Retries      int         `json:"retries"`
	Escalations  int         `json:"escalations"`
	Usage        spend.Total `json:"usage"`
	// DurationMs is the time the run spent running, pauses excluded.
	DurationMs int64  `json:"durationMs"`
	StateFile  string `json:"stateFile"`
	// Sandbox is whether the run's children were confined (SandboxOn, SandboxOff).
	Sandbox string `json:"sandbox"`
}

// Outcomes of a run in its history besides its status (running, done,
// paused, superseded) and its escalation's code (run_budget_exceeded, …).
const (
	HistoryEscalated   = "escalated"
	HistoryUnreadable  = "unreadable"
	historyLogEscalate = "escalated: "
)

// Summarize sums up a run.
func Summarize(st *State, path string) RunSummary {
	done, total := st.StoryCounts()
	s := RunSummary{RunID: st.RunID, StartedAt: st.StartedAt, FinishedAt: st.FinishedAt, StoriesDone: done,
		StoriesTotal: total, Usage: st.Spend(), DurationMs: st.ActiveMs, StateFile: path,
		Sandbox: st.Config.SandboxMode()}
	switch {
	case st.Status == RunPaused && st.Escalation != nil && st.Escalation.Code != "":
		s.Outcome = st.Escalation.Code
	case st.Status == RunPaused && st.Escalation != nil:
		s.Outcome = HistoryEscalated
	default:
		s.Outcome = st.Status
	}
	for _, u := range st.Units {
		for _, step := range u.Steps {
			for i, a := range step.Attempts {
				if !a.attempted() {
					continue
				}
				s.Attempts++
				// A retry follows an attempt of the same review cycle that failed.
				if i > 0 && step.Attempts[i-1].Cycle == a.Cycle && step.Attempts[i-1].FinalState != FinalCompleted {
					s.Retries++
				}
			}
		}
	}
	for _, l := range st.Log {
		if strings.HasPrefix(l.Message, historyLogEscalate) || strings.HasPrefix(l.Message, "paused before the next attempt: ") {
			s.Escalations++
		}
	}
	if s.DurationMs == 0 {
		// Documents written before active time was kept: their wall time.
		a, ok1 := parseTime(st.StartedAt)
		b, ok2 := parseTime(st.UpdatedAt)
		if ok1 && ok2 && b.After(a) {
			s.DurationMs = b.Sub(a).Milliseconds()
		}
	}
	return s
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// History lists the project's runs from their state documents, newest
// first. A document that cannot be read is listed as unreadable.
func History(root string) []RunSummary {
	out := []RunSummary{}
	for _, p := range runDocuments(root) {
		st, err := LoadState(p)
		if err != nil {
			out = append(out, RunSummary{RunID: strings.TrimSuffix(filepath.Base(p), ".md"), Outcome: HistoryUnreadable, StateFile: p})
			continue
		}
		out = append(out, Summarize(st, p))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt > out[j].StartedAt })
	return out
}

// FindRun loads one run of the project by id (or a unique prefix of one).
func FindRun(root, id string) (*State, string, error) {
	var found []string
	for _, p := range runDocuments(root) {
		name := strings.TrimSuffix(filepath.Base(p), ".md")
		if name == id {
			found = []string{p}
			break
		}
		if strings.HasPrefix(name, id) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return nil, "", fmt.Errorf("%w: no run %q in %s", ErrNoSuchRun, id, RunsDir(root))
	case 1:
		st, err := LoadState(found[0])
		return st, found[0], err
	}
	return nil, "", fmt.Errorf("%w: %q names %d runs; give more of the id", ErrNoSuchRun, id, len(found))
}
