package workflows

import (
	"context"
	"errors"
	"fmt"

	"github.com/story-automator/story-automator/internal/coded"
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

// Verification is one `verify STEP STORY`: which story, the verifier that
// checked it, and its verdict.
type Verification struct {
	Step     string
	Key      StoryKey
	Verifier string
	Result
}

// VerifyTarget checks once whether step's work is done for story in the
// project at root. A bad STEP or STORY is a usage error; a project, story or
// verifier it cannot check is a failure coded with Code (internal/coded).
func VerifyTarget(ctx context.Context, root, step, story string) (Verification, error) {
	v := Verification{Step: step}
	var err error
	if v.Key, err = ParseTarget(step, story); err != nil {
		return v, coded.Usage("%v", err)
	}
	proj, err := Open(root)
	if err != nil {
		return v, coded.Fail(Code(err), "%v", err)
	}
	check, err := proj.Verifier(step, v.Key, nil)
	if err != nil {
		return v, coded.Fail(Code(err), "%v", err)
	}
	v.Verifier, v.Result = check.Name(), check.Verify(ctx)
	if v.ContractErr != nil {
		return v, coded.Fail(Code(v.ContractErr), "%s: %v", v.Verifier, v.ContractErr)
	}
	return v, nil
}

// Fields is the verification as JSON fields.
func (v Verification) Fields() map[string]any {
	return map[string]any{"step": v.Step, "story": v.Key.String(), "verifier": v.Verifier, "verified": v.Verified, "detail": v.Detail}
}

// Text is the verification as a line for a person.
func (v Verification) Text() string {
	word := "verified"
	if !v.Verified {
		word = "NOT verified"
	}
	return fmt.Sprintf("%s: %s %s (%s): %s\n", word, v.Step, v.Key.Dotted(), v.Verifier, v.Detail)
}
