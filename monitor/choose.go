package monitor

import (
	"fmt"
	"time"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/sessionstate"
)

// VerifierChoice is what monitor-session's flags ask a completion to be
// verified with: a workflow step's check or a generic --verify spec.
type VerifierChoice struct {
	Workflow, StoryKey, Verify string
	// StoryKeySet, VerifySet: the flag was given (even empty).
	StoryKeySet, VerifySet bool
	// Root is the project; StateDir and Name the session, whose recorded
	// story a workflow check without a story key verifies.
	Root, StateDir, Name string
	// Bound is the bound of one cmd: verification.
	Bound time.Duration
	// ForWorkflow builds a workflow step's verifier; nil when this build has none.
	ForWorkflow func(step, story string) (Verifier, error)
}

// ChooseVerifier builds the verifier ch asks for. Contradicting flags are a
// usage error (internal/coded); a contract that can never verify is an ErrContract error (the
// monitor then reports the session incomplete, or not_found).
func ChooseVerifier(ch VerifierChoice) (Verifier, error) {
	if ch.Workflow != "" && ch.VerifySet {
		return nil, coded.Usage("give --workflow or --verify, not both")
	}
	if ch.StoryKeySet && ch.Workflow == "" {
		return nil, coded.Usage("--story-key needs --workflow")
	}
	if ch.Workflow == "" {
		return ParseVerifySpec(ch.Verify, ch.Root, ch.Bound)
	}
	if ch.ForWorkflow == nil {
		return nil, fmt.Errorf("%w: workflow verifiers are unavailable in this build", ErrContract)
	}
	story := ch.StoryKey
	if story == "" {
		if st, err := sessionstate.Read(ch.StateDir, ch.Name); err == nil {
			story = st.Story
		}
	}
	v, err := ch.ForWorkflow(ch.Workflow, story)
	if err != nil {
		return nil, fmt.Errorf("%w: workflow %s: %v", ErrContract, ch.Workflow, err)
	}
	if v == nil {
		return nil, fmt.Errorf("%w: workflow %s has no verifier", ErrContract, ch.Workflow)
	}
	return v, nil
}

// VerifierName names the verifier ch asks for, as a contract failure reports it.
func (ch VerifierChoice) VerifierName() string {
	if ch.Workflow != "" {
		return "workflow:" + ch.Workflow
	}
	return ch.Verify
}
