package agentsim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/workflows"
)

// Environment of the BMAD behaviour. The spawner and the orchestrator set
// the step, story, epic, attempt, cycle and role of every child (the
// child.Env* variables); a test sets the faults and the log in the
// orchestrator's environment, and every child inherits them.
const (
	// EnvFaults injects faults: a comma-separated list of KIND[:STEP[:ATTEMPT]][@STORY]
	// (see ParseFaults).
	EnvFaults = agent.EnvSimFaults
	// EnvSimLog names a file that receives one JSON line per step the BMAD
	// behaviour acts out, so tests can count what ran.
	EnvSimLog = "STORY_AUTOMATOR_SIM_LOG"
)

// Fault kinds of the BMAD behaviour.
const (
	// FaultCrash exits 1 without doing the work.
	FaultCrash = "crash"
	// FaultFalse exits 0 without doing the work: a false completion.
	FaultFalse = "false"
	// FaultHang says it is working and never finishes.
	FaultHang = "hang"
	// FaultReviewCycles makes review pass only in cycle N ("review-cycles:3").
	FaultReviewCycles = "review-cycles"
	// FaultUnlisted does the step's work but leaves the file it writes out
	// of the story's File List ("unlisted:dev@1-2").
	FaultUnlisted = "unlisted"
	// FaultReviewNever makes review never pass.
	FaultReviewNever = "review-never"
)

// Fault is one injected misbehaviour.
type Fault struct {
	Kind string
	// Step the fault applies to ("" = every step).
	Step string
	// Attempt the fault applies to (0 = every attempt).
	Attempt int
	// Story the fault applies to, canonical ("1-2"; "" = every story).
	Story string
	// Cycles is the review cycle that passes (review-cycles only).
	Cycles int
}

// ParseFaults reads a fault list such as
// "crash:dev:1, false:create:1@1-2, hang:dev:1@1-3, review-cycles:3@1-1, review-never@1-4".
func ParseFaults(spec string) ([]Fault, error) {
	var out []Fault
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		f, err := parseFault(item)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", EnvFaults, item, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func parseFault(item string) (Fault, error) {
	body, story, hasStory := strings.Cut(item, "@")
	parts := strings.Split(body, ":")
	f := Fault{Kind: parts[0]}
	if hasStory {
		key, err := faultStory(story)
		if err != nil {
			return f, err
		}
		f.Story = key
	}
	switch f.Kind {
	case FaultCrash, FaultFalse, FaultHang, FaultUnlisted:
		if len(parts) > 3 {
			return f, fmt.Errorf("want KIND[:STEP[:ATTEMPT]][@STORY]")
		}
		if len(parts) > 1 {
			f.Step = parts[1]
		}
		if len(parts) > 2 {
			n, err := strconv.Atoi(parts[2])
			if err != nil || n < 1 {
				return f, fmt.Errorf("attempt %q is not a positive number", parts[2])
			}
			f.Attempt = n
		}
	case FaultReviewCycles:
		n := 0
		if len(parts) == 2 {
			n, _ = strconv.Atoi(parts[1])
		}
		if n < 1 {
			return f, fmt.Errorf("want review-cycles:N[@STORY] with N ≥ 1")
		}
		f.Step, f.Cycles = "review", n
	case FaultReviewNever:
		if len(parts) != 1 {
			return f, fmt.Errorf("want review-never[@STORY]")
		}
		f.Step = "review"
	default:
		return f, fmt.Errorf("unknown fault kind %q (crash, false, hang, unlisted, review-cycles, review-never)", f.Kind)
	}
	return f, nil
}

// faultStory is the canonical key a fault names after "@": a story in any
// form people write ("1.2", "1-2-greet-by-name", "1.02") or, for retro, an
// epic ("epic-1"). Anything else is refused, so a fault never silently misses.
func faultStory(s string) (string, error) {
	if k, err := workflows.ParseStoryKey(s); err == nil {
		return k.String(), nil
	}
	if t := strings.ToLower(strings.TrimSpace(s)); strings.HasPrefix(t, "epic") {
		if epic, err := workflows.ParseEpicID(t); err == nil {
			return epic, nil
		}
	}
	return "", fmt.Errorf("@%s names no story (1.2, 1-2, 1-2-slug) and no epic (epic-1)", s)
}

// matches reports whether the fault applies to this step of this story and attempt.
func (f Fault) matches(step, story string, attempt int) bool {
	return (f.Step == "" || f.Step == step) && (f.Story == "" || f.Story == story) &&
		(f.Attempt == 0 || f.Attempt == attempt)
}

// faultFor returns the first crash, false or hang fault for the step.
func faultFor(faults []Fault, step, story string, attempt int) (Fault, bool) {
	for _, f := range faults {
		switch f.Kind {
		case FaultCrash, FaultFalse, FaultHang:
			if f.matches(step, story, attempt) {
				return f, true
			}
		}
	}
	return Fault{}, false
}

// unlisted reports whether the step's file stays out of the File List.
func unlisted(faults []Fault, step, story string, attempt int) bool {
	for _, f := range faults {
		if f.Kind == FaultUnlisted && f.matches(step, story, attempt) {
			return true
		}
	}
	return false
}

// reviewPasses decides whether review cycle passes for the story: in cycle
// 1 unless a review-cycles or review-never fault says otherwise.
func reviewPasses(faults []Fault, story string, cycle int) bool {
	for _, f := range faults {
		if !f.matches("review", story, 0) {
			continue
		}
		switch f.Kind {
		case FaultReviewNever:
			return false
		case FaultReviewCycles:
			return cycle >= f.Cycles
		}
	}
	return true
}
