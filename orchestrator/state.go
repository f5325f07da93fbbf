package orchestrator

import (
	"time"

	"github.com/story-automator/story-automator/spend"

	"github.com/story-automator/story-automator/marker"
)

// StateVersion is the schema version of the machine-readable state.
const StateVersion = 1

// Run statuses.
const (
	RunRunning = "running"
	RunPaused  = "paused"
	RunDone    = "done"
	// RunWaiting is a run that waits for an agent's limit to lift (see
	// State.Wait); it goes on by itself.
	RunWaiting = "waiting"
	// RunSuperseded is an unfinished run that a newer run replaced: never resumed.
	RunSuperseded = "superseded"
)

// Unit kinds: a story, or the retrospective at an epic's end.
const (
	KindStory = "story"
	KindRetro = "retro"
)

// Unit and step statuses.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusDone      = "done"      // units
	StatusVerified  = "verified"  // steps
	StatusSkipped   = "skipped"   // steps the project did not need
	StatusFailed    = "failed"    // optional steps that ran out of attempts
	StatusEscalated = "escalated" // the step (and its unit) that paused the run
)

// State is a run's whole record: what `run --resume` continues from and what
// the markdown state document shows.
type State struct {
	Version     int         `json:"version"`
	RunID       string      `json:"runId"`
	Status      string      `json:"status"`
	ProjectRoot string      `json:"projectRoot"`
	StartedAt   string      `json:"startedAt"`
	UpdatedAt   string      `json:"updatedAt"`
	FinishedAt  string      `json:"finishedAt,omitempty"`
	PauseReason string      `json:"pauseReason,omitempty"`
	Config      RunConfig   `json:"config"`
	Units       []*Unit     `json:"units"`
	Escalation  *Escalation `json:"escalation,omitempty"`
	Log         []LogEntry  `json:"log"`
	// Seq numbers the changes: the document holds every change up to Seq,
	// its journal those after (see journal.go).
	Seq int64 `json:"seq,omitempty"`
	// ActiveMs is how long the run has been running, pauses excluded: what
	// --max-duration counts.
	ActiveMs int64 `json:"activeMs,omitempty"`
	// Usage is the run's spend, summed from its attempts (see tally).
	Usage *spend.Total `json:"usage,omitempty"`
	// Wait is the limit the run waits out, while it does (see limits.go);
	// a resumed run waits only what is left of it.
	Wait *LimitWait `json:"wait,omitempty"`
	// Limited holds, per agent, the limit it last met and when that lifts:
	// a limited agent is no fallback until then.
	Limited map[string]*AgentLimit `json:"limited,omitempty"`
	// Timeline is the last HTML timeline `runs show --html` wrote of the
	// run (see LinkTimeline).
	Timeline *TimelineFile `json:"timeline,omitempty"`
}

// TimelineFile is an HTML timeline of the run: where it was written, and
// when (it shows the run as it stood then).
type TimelineFile struct {
	Path      string `json:"path"`
	WrittenAt string `json:"writtenAt"`
}

// Unit is one story of the run, or one epic's retrospective.
type Unit struct {
	Key       string   `json:"key"`
	Kind      string   `json:"kind"`
	Epic      string   `json:"epic"`
	Dotted    string   `json:"dotted"`
	Title     string   `json:"title,omitempty"`
	DependsOn []string `json:"dependsOn,omitempty"`
	Status    string   `json:"status"`
	Commit    string   `json:"commit,omitempty"`
	// Worktree is the project in the story's own git worktree while it has
	// one (--isolate worktree; see worktree.go): kept when the story escalates.
	Worktree string `json:"worktree,omitempty"`
	// Host is the machine the unit's steps run on (workflows.LocalHost or a
	// `hosts:` name), set when it is scheduled (see hostslots.go).
	Host string `json:"host,omitempty"`
	// Paths are the project-relative paths that changed while the unit's
	// sessions ran: what its commit takes (see ownership.go).
	Paths []string `json:"paths,omitempty"`
	// Spec is the spec the story's worker wrote (build-auto pipeline),
	// relative to the project: every later dispatch resumes it by this path.
	// Base is the commit the story started from, SpecsBefore the story's
	// specs there were before its first dispatch, and the worker's result
	// files with their content's sum (see Pipeline.Dispatch; a state from
	// an older run may list every spec there was).
	Spec        string   `json:"spec,omitempty"`
	Base        string   `json:"base,omitempty"`
	SpecsBefore []string `json:"specsBefore,omitempty"`
	// Halt: the story's last dispatch asked its worker to halt after
	// planning (a plan checkpoint).
	Halt  bool         `json:"haltAfterPlanning,omitempty"`
	Steps []*StepState `json:"steps"`
	// Usage is the unit's spend (see tally).
	Usage *spend.Total `json:"usage,omitempty"`
	// Target is a retrospective's -H argument when it is not the epic's id
	// (a spec folder, in stories mode).
	Target string `json:"target,omitempty"`
	// Retro is a retrospective's verdict, once the run read it (a pipeline
	// with a Retrospective).
	Retro *RetroVerdict `json:"retro,omitempty"`
	// Work is a sweep or action unit's items (see leftover.go).
	Work *Work `json:"work,omitempty"`
	// Parked is why the unit is parked, while it is (see park.go).
	Parked *Parked `json:"parked,omitempty"`
}

// StepState is where one step of a unit stands.
type StepState struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
	// BudgetFrom is the index of the first attempt counted against the step's
	// retries and review cycles; resuming an escalated step starts a new budget.
	BudgetFrom int `json:"budgetFrom,omitempty"`
	// VerifyFirst is set on an escalated step when the run resumes: its
	// verifier runs once before any agent, in case a human finished it.
	VerifyFirst bool      `json:"verifyFirst,omitempty"`
	Attempts    []Attempt `json:"attempts,omitempty"`
	VerifiedAt  string    `json:"verifiedAt,omitempty"`
	// Usage is the step's spend (see tally).
	Usage *spend.Total `json:"usage,omitempty"`
}

// Attempt is one child session that ran a step.
type Attempt struct {
	N          int    `json:"n"`
	Cycle      int    `json:"cycle,omitempty"`
	Agent      string `json:"agent"`
	Role       string `json:"role"`
	Session    string `json:"session,omitempty"`
	OutputFile string `json:"outputFile,omitempty"`
	FinalState string `json:"finalState,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Verifier   string `json:"verifier,omitempty"`
	// Detail is the verifier's last word on the attempt.
	Detail string `json:"detail,omitempty"`
	// ResetsAt is, for a limited attempt, when its limit lifts (RFC 3339;
	// "" when the agent did not say).
	ResetsAt  string `json:"resetsAt,omitempty"`
	StartedAt string `json:"startedAt"`
	EndedAt   string `json:"endedAt,omitempty"`
	// WallMs is the attempt's whole time; AgentMs the child session's share.
	WallMs  int64 `json:"wallMs,omitempty"`
	AgentMs int64 `json:"agentMs,omitempty"`
	// Model is the model the attempt ran: as the agent's record names it,
	// else as it was asked for.
	Model string `json:"model,omitempty"`
	// Usage is what the agent's own record says the attempt spent, priced;
	// nil when it could not be read, UsageNote then says why.
	Usage     *spend.Usage `json:"usage"`
	UsageNote string       `json:"usageNote,omitempty"`
}

// Escalation is why a run paused and what the human should do about it.
type Escalation struct {
	At     string `json:"at"`
	Unit   string `json:"unit"`
	Step   string `json:"step"`
	Reason string `json:"reason"`
	Action string `json:"action"`
	// Code is the cause's own code when no retry could change it (see Blocker).
	Code string `json:"code,omitempty"`
	// ResetsAt is, for a step escalated on a limit (usage_limit), when the
	// limit lifts ("" when unknown).
	ResetsAt string `json:"resetsAt,omitempty"`
}

// LogEntry is one line of the action log.
type LogEntry struct {
	At      string `json:"at"`
	Unit    string `json:"unit,omitempty"`
	Step    string `json:"step,omitempty"`
	Message string `json:"message"`
}

// Unit returns the unit with key, or nil.
func (s *State) Unit(key string) *Unit {
	for _, u := range s.Units {
		if u.Key == key {
			return u
		}
	}
	return nil
}

// resumable reports whether `run --resume` may continue the run.
func (s *State) resumable() bool {
	return s.Status != RunDone && s.Status != RunSuperseded
}

// StoriesRemaining counts story units not yet done.
func (s *State) StoriesRemaining() int {
	n := 0
	for _, u := range s.Units {
		if u.Kind == KindStory && u.Status != StatusDone {
			n++
		}
	}
	return n
}

// StoryCounts returns how many story units are done, of how many.
func (s *State) StoryCounts() (done, total int) {
	for _, u := range s.Units {
		if u.Kind == KindStory {
			total++
			if u.Status == StatusDone {
				done++
			}
		}
	}
	return done, total
}

// addLog appends an action-log line.
func (s *State) addLog(now time.Time, unit, step, msg string) {
	s.Log = append(s.Log, LogEntry{At: marker.Timestamp(now), Unit: unit, Step: step, Message: msg})
}

// Step returns the unit's step by name, or nil.
func (u *Unit) Step(name string) *StepState {
	for _, st := range u.Steps {
		if st.Name == name {
			return st
		}
	}
	return nil
}

// CurrentStep is the first step not yet finished, or "".
func (u *Unit) CurrentStep() *StepState {
	for _, st := range u.Steps {
		if !st.finished() {
			return st
		}
	}
	return nil
}

// finished reports whether the step needs no more work.
func (st *StepState) finished() bool {
	switch st.Status {
	case StatusVerified, StatusSkipped, StatusFailed:
		return true
	}
	return false
}

// counted returns the attempts since BudgetFrom that count against the
// budget: every one except those the orchestrator itself abandoned and
// those a limit or an API fault stopped.
func (st *StepState) counted() []Attempt {
	from := min(st.BudgetFrom, len(st.Attempts))
	var out []Attempt
	for _, a := range st.Attempts[from:] {
		if a.FinalState != FinalInterrupted && a.FinalState != FinalLimited && a.FinalState != "" {
			out = append(out, a)
		}
	}
	return out
}

// lastFinished is the most recent attempt that ended on its own (not on a
// limit), or nil.
func (st *StepState) lastFinished() *Attempt {
	for i := len(st.Attempts) - 1; i >= 0; i-- {
		if a := &st.Attempts[i]; a.FinalState != FinalInterrupted && a.FinalState != FinalLimited && a.FinalState != "" {
			return a
		}
	}
	return nil
}
