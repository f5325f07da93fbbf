package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/internal/verify"
)

// Verifier names, as the policy's `verifier` key spells them.
const (
	// VerifySessionExit passes once the session completed: the step leaves no artifact to check.
	VerifySessionExit = "session_exit"
	// VerifyCreateStoryArtifact passes when the story has exactly one story file.
	VerifyCreateStoryArtifact = "create_story_artifact"
	// VerifyDevCompletion passes when sprint-status or the story file says review or done.
	VerifyDevCompletion = "dev_completion"
	// VerifyReviewCompletion passes when sprint-status or the story file says done.
	VerifyReviewCompletion = "review_completion"
	// VerifyEpicComplete passes when every story of the epic is done.
	VerifyEpicComplete = "epic_complete"
	// VerifyCommand passes when the policy's command exits 0 within its time bound.
	VerifyCommand = "command"
)

// VerifierNames lists every verifier a policy may name.
func VerifierNames() []string {
	return []string{VerifySessionExit, VerifyCreateStoryArtifact, VerifyDevCompletion, VerifyReviewCompletion, VerifyEpicComplete, VerifyCommand}
}

// Check confirms that a step's work really happened: a verify.Verifier, so
// the monitor and the run use it as it is. Verify reads the files afresh on
// every call, so it can be re-checked after a grace period.
type Check = verify.Verifier

// Result is the answer of one verification.
// A contract error (ContractErr) wraps ErrContract: the check can never pass
// as asked, and re-checking is pointless.
type Result = verify.Verdict

// Verifier builds the check that confirms step for a story (for StepRetro,
// key may name the epic or any of its stories). An unknown step, an unknown
// story or epic, or an epic key for a story step is a contract error
// (errors.Is(err, ErrContract)). pol nil means the project's policy.
func (p *Layout) Verifier(step string, key StoryKey, pol *Policy) (Check, error) {
	return p.ConfinedVerifier(step, key, pol, nil)
}

// ConfinedVerifier is Verifier with the command verifier confined by sb
// (nil: as the policy's `sandbox` says).
func (p *Layout) ConfinedVerifier(step string, key StoryKey, pol *Policy, sb *CommandSandbox) (Check, error) {
	return p.stepCheck(step, key, pol, sb, false)
}

// ConfinedCommandVerifier is the step's `command` verifiers alone, confined
// as ConfinedVerifier confines them, or session_exit when the step has
// none: the check of a step whose outcome its pipeline reads from the
// project's files (BMAD 6.12's worker writes no story file for the others
// to read).
func (p *Layout) ConfinedCommandVerifier(step string, key StoryKey, pol *Policy, sb *CommandSandbox) (Check, error) {
	return p.stepCheck(step, key, pol, sb, true)
}

// stepCheck is the step's verifiers as one check: every one of them, or
// (commandOnly) its command verifiers, else session_exit.
func (p *Layout) stepCheck(step string, key StoryKey, pol *Policy, sb *CommandSandbox, commandOnly bool) (Check, error) {
	if pol == nil {
		var err error
		if pol, err = LoadPolicy(p.Root); err != nil {
			return nil, err
		}
	}
	if sb == nil {
		s := pol.CommandSandbox()
		sb = &s
	}
	s, err := pol.Step(step)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrContract, err)
	}
	if !commandOnly {
		if err := p.checkTarget(step, key); err != nil {
			return nil, err
		}
	}
	var checks []Check
	for _, name := range s.Verifiers {
		if !commandOnly || name == VerifyCommand {
			checks = append(checks, p.namedCheck(name, step, key, pol, s, *sb))
		}
	}
	switch {
	case len(checks) == 0 && commandOnly:
		return p.namedCheck(VerifySessionExit, step, key, pol, s, *sb), nil
	case len(checks) == 1:
		return checks[0], nil
	}
	return allOf(checks), nil
}

// checkTarget makes sure the story (or, for retro, the epic) exists.
func (p *Layout) checkTarget(step string, key StoryKey) error {
	if step == StepRetro {
		stories, err := p.epicStories(key.Epic)
		if err != nil {
			return err
		}
		if len(stories) == 0 {
			return fmt.Errorf("%w: %w %s: no stories in sprint-status.yaml or the epics", ErrContract, ErrEpicNotFound, key.Epic)
		}
		return nil
	}
	if key.IsEpic() {
		return fmt.Errorf("%w: %w: step %s needs a story, got epic %s", ErrContract, ErrInvalidKey, step, key.Epic)
	}
	if _, err := p.Story(key); err != nil {
		if errors.Is(err, ErrStoryNotFound) {
			return fmt.Errorf("%w: %w", ErrContract, err)
		}
		return err
	}
	return nil
}

func (p *Layout) epicStories(epic string) ([]Story, error) {
	all, err := p.Stories()
	if err != nil && !errors.Is(err, ErrSprintNotFound) {
		return nil, err
	}
	return filter(all, func(s Story) bool { return s.Key.Epic == epic }), nil
}

func (p *Layout) namedCheck(name, step string, key StoryKey, pol *Policy, s *Step, sb CommandSandbox) Check {
	switch name {
	case VerifyCreateStoryArtifact:
		return checkFunc{name, func(context.Context) Result { return p.verifyStoryFile(key) }}
	case VerifyDevCompletion:
		return checkFunc{name, func(context.Context) Result { return p.verifyStatus(key, StatusReview, StatusDone) }}
	case VerifyReviewCompletion:
		return checkFunc{name, func(context.Context) Result { return p.verifyStatus(key, StatusDone) }}
	case VerifyEpicComplete:
		return checkFunc{name, func(context.Context) Result { return p.verifyEpic(key.Epic) }}
	case VerifyCommand:
		cmd, limit := pol.CommandFor(s)
		return &commandCheck{dir: p.Root, command: cmd, limit: limit, sb: sb}
	}
	if name == VerifySessionExit {
		return checkFunc{name, func(context.Context) Result {
			return Result{Verified: true, Detail: "the " + step + " session completed"}
		}}
	}
	// Policy validation rejects unknown names; a name that slips through must
	// not pass silently.
	return checkFunc{name, func(context.Context) Result {
		return Result{Detail: "unknown verifier " + name, ContractErr: fmt.Errorf("%w: unknown verifier %q", ErrContract, name)}
	}}
}

// checkFunc is a Check made of a name and a function.
type checkFunc struct {
	name string
	fn   func(context.Context) Result
}

func (c checkFunc) Name() string                      { return c.name }
func (c checkFunc) Verify(ctx context.Context) Result { return c.fn(ctx) }

// allOf passes when every check passes, and reports the first that does not.
type allOf []Check

func (a allOf) Name() string {
	names := make([]string, len(a))
	for i, c := range a {
		names[i] = c.Name()
	}
	return strings.Join(names, "+")
}

func (a allOf) Verify(ctx context.Context) Result {
	var details []string
	for _, c := range a {
		r := c.Verify(ctx)
		if !r.Passed() {
			r.Detail = c.Name() + ": " + r.Detail
			return r
		}
		details = append(details, r.Detail)
	}
	return Result{Verified: true, Detail: strings.Join(details, "; ")}
}

func (p *Layout) verifyStoryFile(key StoryKey) Result {
	files, err := p.StoryFiles(key)
	if err != nil {
		return Result{Detail: err.Error()}
	}
	switch len(files) {
	case 1:
		return Result{Verified: true, Detail: "story file " + p.Rel(files[0])}
	case 0:
		want := key.String() + "-<slug>.md"
		if s, err := p.Story(key); err == nil {
			want = s.FullKey() + ".md"
		}
		return Result{Detail: fmt.Sprintf("no story file for %s in %s (expected %s)", key.Dotted(), p.Rel(p.ArtifactsDir), want)}
	}
	return Result{Detail: fmt.Sprintf("%d story files for %s, want exactly one: %s", len(files), key.Dotted(), strings.Join(p.rels(files), ", "))}
}

func (p *Layout) verifyStatus(key StoryKey, want ...string) Result {
	st, err := p.StoryStatus(key)
	if err != nil {
		return Result{Detail: err.Error()}
	}
	switch {
	case slices.Contains(want, st.Sprint):
		return Result{Verified: true, Detail: fmt.Sprintf("sprint-status.yaml says %s is %s", key.Dotted(), st.Sprint)}
	case slices.Contains(want, st.File):
		return Result{Verified: true, Detail: fmt.Sprintf("the story file says %s is %s", key.Dotted(), st.File)}
	}
	return Result{Detail: fmt.Sprintf("story %s is not %s: sprint-status.yaml says %s, the story file says %s",
		key.Dotted(), strings.Join(want, " or "), orNone(st.Sprint), orNone(st.File))}
}

func (p *Layout) verifyEpic(epic string) Result {
	stories, err := p.epicStories(epic)
	if err != nil {
		return Result{Detail: err.Error()}
	}
	if len(stories) == 0 {
		return Result{Detail: "epic " + epic + " has no stories", ContractErr: fmt.Errorf("%w: %w %s", ErrContract, ErrEpicNotFound, epic)}
	}
	keys := make([]StoryKey, len(stories))
	for i, s := range stories {
		keys[i] = s.Key
	}
	statuses, err := p.storyStatuses(keys)
	if err != nil {
		return Result{Detail: err.Error()}
	}
	var open []string
	for i, s := range stories {
		if st := statuses[i]; !st.Is(StatusDone) {
			open = append(open, fmt.Sprintf("%s (%s)", s.Key.Dotted(), orNone(firstNonEmpty(st.Sprint, st.File))))
		}
	}
	if len(open) > 0 {
		return Result{Detail: fmt.Sprintf("epic %s: %d of %d stories not done: %s", epic, len(open), len(stories), strings.Join(open, ", "))}
	}
	return Result{Verified: true, Detail: fmt.Sprintf("epic %s: all %d stories done", epic, len(stories))}
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
