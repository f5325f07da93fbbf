package marker

import (
	"errors"
	"fmt"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
)

// Spec is a new run's marker as `marker create` describes it.
type Spec struct {
	Mode              string
	Epic, Story, Step string
	Remaining         int
	// RemainingSet: the remaining count was given (a story run needs it).
	RemainingSet                  bool
	StateFile, ProjectSlug, Owner string
	Pid                           int
	// ClaimOnStop: no owner is named, yet the marker is made inside an
	// agent session, so the first session whose Stop hook meets it owns it.
	ClaimOnStop bool
}

// New checks spec and builds an active marker from it, created and beating
// at now. With its start time the owner pid names one process: a pid reused
// later does not pass for it.
func New(spec Spec, now time.Time) (*Marker, error) {
	switch {
	case spec.Mode != ModeStory && spec.Mode != ModeLoop:
		return nil, fmt.Errorf("--mode must be story or loop, got %q", spec.Mode)
	case spec.Mode == ModeStory && !spec.RemainingSet:
		// Without it the marker would guard nothing (0 = nothing to guard):
		// a forgotten flag must not silently drop the guard of a live run.
		return nil, errors.New("marker create needs --remaining N for a story run")
	case spec.Remaining < 0:
		return nil, errors.New("--remaining must not be negative")
	case spec.Pid < 0:
		return nil, errors.New("--pid must not be negative")
	}
	ts := Timestamp(now)
	m := &Marker{
		Version: SchemaVersion, Mode: spec.Mode, Status: StatusActive,
		Epic: spec.Epic, CurrentStory: spec.Story, CurrentStep: spec.Step,
		StoriesRemaining: spec.Remaining, StateFile: spec.StateFile,
		ProjectSlug: spec.ProjectSlug, OwnerSession: spec.Owner, OwnerPid: spec.Pid,
		CreatedAt: ts, Heartbeat: ts, ClaimOnStop: spec.ClaimOnStop,
	}
	m.OwnerPidStart, _ = proc.Start(m.OwnerPid)
	return m, nil
}

// Progress is what a heartbeat changes; a nil field stays as it is.
type Progress struct {
	Story, Step *string
	Remaining   *int
}

// Beat records verified progress p at now.
func (m *Marker) Beat(p Progress, now time.Time) {
	if p.Story != nil {
		m.CurrentStory = *p.Story
	}
	if p.Step != nil {
		m.CurrentStep = *p.Step
	}
	if p.Remaining != nil {
		m.StoriesRemaining = *p.Remaining
	}
	m.Touch(now)
}

// Claim makes owner the run's owner session, with a fresh circuit-breaker count.
func (m *Marker) Claim(owner string) {
	m.OwnerSession = owner
	m.StopHookBlocks = 0
}
