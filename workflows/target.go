package workflows

import (
	"errors"
	"fmt"

	"github.com/story-automator/story-automator/internal/verify"
)

// ParseTarget checks the step name and reads the story key a verification
// is about; for retro an epic id ("1", "epic-1") is accepted as well.
func ParseTarget(step, story string) (StoryKey, error) {
	known := false
	for _, s := range AllSteps() {
		known = known || s == step
	}
	if !known {
		return StoryKey{}, fmt.Errorf("unknown step %q (steps: create, dev, automate, review, commit, retro)", step)
	}
	key, err := ParseStoryKey(story)
	if err != nil && step == StepRetro {
		if epic, eerr := ParseEpicID(story); eerr == nil {
			return StoryKey{Epic: epic}, nil
		}
	}
	return key, err
}

// StepVerifier is the verifier of step for story in the project at root
// (monitor-session --workflow/--story-key). A request that can never verify
// (unknown step, story or epic, a malformed key) becomes a verifier whose
// verdict carries ContractErr, so a monitor reports incomplete at once; a
// project it cannot read is an error.
func StepVerifier(root, step, story string) (Check, error) {
	key, err := ParseTarget(step, story)
	if err != nil {
		return verify.Contract("workflow:"+step, fmt.Errorf("%w: %w", ErrContract, err)), nil
	}
	proj, err := Open(root)
	if err != nil {
		return nil, err
	}
	check, err := proj.Verifier(step, key, nil)
	if errors.Is(err, ErrContract) {
		return verify.Contract("workflow:"+step, err), nil
	}
	if err != nil {
		return nil, err
	}
	return check, nil
}
