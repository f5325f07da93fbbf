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
	RunID        string `json:"runId"`
	StartedAt    string `json:"startedAt"`
	FinishedAt   string `json:"finishedAt,omitempty"`
	Outcome      string `json:"outcome"`
	StoriesDone  int    `json:"storiesDone"`
	StoriesTotal int    `json:"storiesTotal"`
	Attempts     int    `json:"attempts"`
	Retries      int    `json:"retries"`
	Escalations  int    `json:"escalations"`
	// Limits counts the attempts a usage or rate limit stopped, APIFaults
	// those an API fault stopped (neither is a retry): an outage is told
	// from an agent that fails.
	Limits    int `json:"limits"`
	APIFaults int `json:"apiFaults"`
	// Wait is the limit the run waits out, while it does (or was stopped
	// in), and WaitRemainingSeconds how long it has left when listed.
	Wait                 *LimitWait  `json:"wait,omitempty"`
	WaitRemainingSeconds int64       `json:"waitRemainingSeconds,omitempty"`
	Usage                spend.Total `json:"usage"`
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
		StoriesTotal: total, Usage: st.Spend(), DurationMs: st.ActiveMs, StateFile: path, Wait: st.Wait,
		Sandbox: st.Config.SandboxMode()}
	switch {
	case st.Status == RunPaused && st.Escalation != nil && st.Escalation.Code != "":
		s.Outcome = st.Escalation.Code
	case st.Status == RunPaused && st.Escalation != nil:
		s.Outcome = HistoryEscalated
	case st.Status == RunPaused && onlyParkedLeft(st):
		s.Outcome = string(OutcomeDoneWithParked)
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
				switch {
				case IsAPIFault(a):
					s.APIFaults++
				case a.FinalState == FinalLimited:
					s.Limits++
				}
				// A retry follows an attempt of the same review cycle that
				// failed; one after a limit or an API fault is no retry.
				if prev := previousAttempt(step, i); prev != nil && prev.Cycle == a.Cycle && prev.FinalState != FinalCompleted &&
					prev.FinalState != FinalLimited {
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

// At fills in what depends on the time the summary is shown: the wait's countdown.
func (s RunSummary) At(now time.Time) RunSummary {
	if s.Wait != nil {
		s.WaitRemainingSeconds = int64(s.Wait.Remaining(now).Seconds())
	}
	return s
}

// SummarizeSeen sums up a run as a reader shows it: a running run whose
// process is gone (lockHeld false) is interrupted.
func SummarizeSeen(st *State, path string, lockHeld bool) RunSummary {
	s := Summarize(st, path)
	if s.Outcome == st.Status {
		s.Outcome = st.SeenStatus(lockHeld)
	}
	return s
}

func previousAttempt(st *StepState, i int) *Attempt {
	if i == 0 {
		return nil
	}
	return &st.Attempts[i-1]
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// History lists the project's runs from their state documents, newest
// first. A document that cannot be read is listed as unreadable.
// A running run whose process is gone is listed as interrupted.
func History(root string) []RunSummary { return HistoryWith(root, nil) }

// HistoryWith is History reusing the states already loaded, by path.
func HistoryWith(root string, loaded map[string]*State) []RunSummary {
	out := []RunSummary{}
	held := RunLockHeld(root)
	for _, p := range runDocuments(root) {
		st, err := loaded[p], error(nil)
		if st == nil {
			st, err = LoadState(p)
		}
		if err != nil {
			out = append(out, RunSummary{RunID: strings.TrimSuffix(filepath.Base(p), ".md"), Outcome: HistoryUnreadable, StateFile: p})
			continue
		}
		out = append(out, SummarizeSeen(st, p, held).At(time.Now()))
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
