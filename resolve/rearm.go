package resolve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/workflows"
)

// Options are one resolve: the story, and what is done before it is re-armed.
type Options struct {
	Story string
	// RestorePatch re-applies the intent-gap patch the worker saved and
	// sends the story to review (spec in-review), no session.
	RestorePatch bool
	// Replan sends the story back to planning (spec draft), no session.
	Replan bool
	// Message says what the person did, for the run's log.
	Message string
}

// Resolver resolves a story of a project's run.
type Resolver struct {
	Root   string
	Getenv func(string) string
	Now    func() time.Time
	// Session is the conversation before the re-arm; nil = none (a
	// scripted fix: --no-interactive).
	Session Session
	// Git runs git in a folder and returns its combined output (the git
	// program when nil).
	Git func(ctx context.Context, dir string, args ...string) ([]byte, error)
	// Unpark brings a parked story's work back from its ref into the
	// project's tree (gitvcs.Git.Unpark on Root when nil).
	Unpark func(ctx context.Context, ref string) (restored bool, err error)
}

// Result is what a resolve did.
type Result struct {
	Story string `json:"story"`
	Step  string `json:"step"`
	// Spec is the story's spec (relative to its folder), SpecFrom and
	// SpecTo its status before and after ("" SpecTo: left as it was).
	Spec     string `json:"spec,omitempty"`
	SpecFrom string `json:"specFrom,omitempty"`
	SpecTo   string `json:"specTo,omitempty"`
	// Patch is the intent-gap patch re-applied (--restore-patch).
	Patch string `json:"patch,omitempty"`
	// Unparked is the ref a parked story's work was brought back from.
	Unparked  string `json:"unparked,omitempty"`
	StateFile string `json:"stateFile"`
	// Resume is the command that takes the story up.
	Resume string `json:"resume"`
}

// Resolve holds the run lock (no run may take the story meanwhile), finds
// the story, runs the session or restores the patch, and then re-arms the
// story: its spec first (one atomic write), then its unit and step in the
// state document (another). A session that did not end normally re-arms
// nothing: the story stays escalated or parked.
func (r Resolver) Resolve(ctx context.Context, o Options) (*Result, error) {
	if o.RestorePatch && o.Replan {
		return nil, coded.Usage("--restore-patch sends the story to review and a replan to planning: choose one")
	}
	lock, err := orchestrator.AcquireRunLock(r.Root)
	if errors.Is(err, orchestrator.ErrRunActive) {
		return nil, coded.Wrap(CodeRunActive, err).
			WithAction("a run holds the project: resolve the story once it has paused or ended (`story-automator status` shows it), or stop it with `story-automator stop`")
	}
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	t, err := Find(r.Root, r.getenv, o.Story)
	if err != nil {
		return nil, err
	}
	res := &Result{Story: t.Unit.Dotted, Step: t.Step.Name, StateFile: t.StatePath, Resume: orchestrator.ResumeCommand}
	if err := r.unpark(ctx, t, res); err != nil {
		return nil, err
	}
	var before []byte
	if t.Spec != "" {
		before, _ = os.ReadFile(t.Spec)
		res.Spec = t.rel(t.Spec)
	}
	switch {
	case o.RestorePatch:
		if err := r.restorePatch(ctx, t, res); err != nil {
			return nil, err
		}
	case o.Replan:
		if _, ok, err := t.spec(); err != nil || !ok {
			return nil, noSpec(t, err)
		}
	case r.Session != nil:
		if err := r.Session.Run(ctx, t, Brief(t)); err != nil {
			return nil, coded.Wrap(CodeSessionEnded, err).WithAction(
				"story %s stays %s: nothing was re-armed. Run `story-automator resolve %s` again, or `--no-interactive` once it is fixed",
				t.Unit.Dotted, t.Unit.Status, t.Unit.Dotted)
		}
	}
	if err := r.rearmSpec(t, o, before, res); err != nil {
		return nil, err
	}
	if err := r.rearmState(t, o, res); err != nil {
		return nil, err
	}
	return res, nil
}

// unpark brings the work of a story parked in the project's tree back
// from its ref before anything else, as `run --resume` would: the session,
// the patch and the spec see the story as it was when it parked (a story
// in its own worktree has its work there already). The ref stays; a
// resolve that ends here leaves the story parked, and the resume that
// takes it up finds the work in the tree already.
func (r Resolver) unpark(ctx context.Context, t *Target, res *Result) error {
	u := t.Unit
	if u.Status != orchestrator.StatusParked || u.Worktree != "" {
		return nil
	}
	ref := orchestrator.ParkRef(t.State.RunID, u.Key)
	un := r.Unpark
	if un == nil {
		un = (&gitvcs.Git{Root: r.Root}).Unpark
	}
	restored, err := un(ctx, ref)
	if err != nil {
		return coded.Fail(CodeUnparkFailed, "story %s's parked work at %s does not apply to the tree as it is: %v", u.Dotted, ref, err).
			WithAction("take it back by hand (`git cherry-pick --no-commit %s`), then run `story-automator resolve %s` again", ref, u.Dotted)
	}
	if restored {
		res.Unparked = ref
	}
	return nil
}

func (r Resolver) getenv(k string) string {
	if r.Getenv == nil {
		return ""
	}
	return r.Getenv(k)
}

func (r Resolver) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

func noSpec(t *Target, err error) error {
	if err != nil {
		return coded.Wrap(CodeNoSpec, err)
	}
	return coded.Fail(CodeNoSpec, "story %s has no spec yet", t.Unit.Dotted).
		WithAction("resolve it with `story-automator resolve %s` or `--no-interactive`: its next dispatch plans it afresh", t.Unit.Dotted)
}

// restorePatch re-applies the worker's intent-gap patch in the story's
// folder; one already applied (a resolve killed after applying it) is
// applied once only.
func (r Resolver) restorePatch(ctx context.Context, t *Target, res *Result) error {
	if _, ok, err := t.spec(); err != nil || !ok {
		return noSpec(t, err)
	}
	patch := t.IntentGapPatch()
	if patch == "" {
		return coded.Fail(CodeNoPatch, "story %s has no saved intent-gap patch: its spec %s names none, and no .patch beside it names %s",
			t.Unit.Dotted, t.rel(t.Spec), t.Unit.Key).
			WithAction("resolve it with `story-automator resolve %s` instead", t.Unit.Dotted)
	}
	res.Patch = t.rel(patch)
	if _, err := r.git(ctx, t.Dir, "apply", "--check", "--reverse", patch); err == nil {
		return nil // applied already
	}
	if out, err := r.git(ctx, t.Dir, "apply", patch); err != nil {
		return coded.Fail(CodePatchFailed, "git apply %s failed: %s", res.Patch, strings.TrimSpace(string(out))).
			WithAction("the tree moved since the patch was saved: apply it by hand (`git apply --3way %s`) and run `story-automator resolve %s --no-interactive`, or resolve it in a session",
				res.Patch, t.Unit.Dotted)
	}
	return nil
}

func (r Resolver) git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	if r.Git != nil {
		return r.Git(ctx, dir, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// specStatus is the status the story's spec is re-armed with ("" = left
// as it is): in-review after a restored patch, draft for a replan; a
// blocked spec goes to draft when its plan changed meanwhile or was never
// implemented (no baseline), else to ready-for-dev; a status the person
// set is kept.
func specStatus(o Options, spec workflows.Spec, before, after []byte) string {
	switch {
	case o.RestorePatch:
		return workflows.SpecInReview
	case o.Replan:
		return workflows.SpecDraft
	case spec.Status != workflows.SpecBlocked:
		return ""
	case spec.BaselineRevision == "" || !bytes.Equal(withoutStatus(before), withoutStatus(after)):
		return workflows.SpecDraft
	}
	return workflows.SpecReadyForDev
}

// withoutStatus is a spec's text without its status line.
func withoutStatus(text []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(text, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("status:")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// rearmSpec sets the spec's status (one atomic write).
func (r Resolver) rearmSpec(t *Target, o Options, before []byte, res *Result) error {
	spec, ok, err := t.spec()
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	after, err := os.ReadFile(t.Spec)
	if err != nil {
		return err
	}
	res.SpecFrom = spec.Status
	to := specStatus(o, spec, before, after)
	if to == "" || to == spec.Status {
		return nil
	}
	if err := workflows.SetSpecStatus(t.Spec, to); err != nil {
		return err
	}
	res.SpecTo = to
	return nil
}

// rearmState sets the unit and its stopped step pending in the state
// document, the step with a fresh budget and checked first (as `run
// --resume` does for an escalated step), the run's escalation dropped when
// it is the story's, the resolve logged; one atomic write.
func (r Resolver) rearmState(t *Target, o Options, res *Result) error {
	st, err := orchestrator.LoadState(t.StatePath)
	if err != nil {
		return err
	}
	u := st.Unit(t.Unit.Key)
	var step *orchestrator.StepState
	if u != nil {
		step = u.Step(t.Step.Name)
	}
	if step == nil {
		return fmt.Errorf("story %s changed in %s while it was resolved", t.Unit.Dotted, t.StatePath)
	}
	if u.Status == orchestrator.StatusParked && u.Worktree == "" {
		// Other stories landed while it was parked: its one commit is
		// made from the branch as it is now (as run --resume does).
		u.Base = ""
	}
	u.Status, u.Parked = orchestrator.StatusPending, nil
	step.Status, step.Note, step.BudgetFrom, step.VerifyFirst = orchestrator.StatusPending, "", len(step.Attempts), true
	if e := st.Escalation; e != nil && e.Unit == u.Dotted {
		st.Escalation = nil
	}
	msg := "resolved by a person"
	switch {
	case o.RestorePatch:
		msg += ": the intent-gap patch " + res.Patch + " re-applied"
	case o.Replan:
		msg += ": a replan asked"
	case r.Session != nil:
		msg += " in a session"
	}
	if res.Unparked != "" {
		msg += "; its parked work brought back from " + res.Unparked
	}
	if res.SpecTo != "" {
		msg += fmt.Sprintf("; spec %s %s → %s", res.Spec, res.SpecFrom, res.SpecTo)
	}
	if m := strings.TrimSpace(o.Message); m != "" {
		msg += "; " + m
	}
	msg += "; " + orchestrator.ResumeCommand + " takes it up"
	now := r.now()
	st.UpdatedAt = marker.Timestamp(now)
	st.Log = append(st.Log, orchestrator.LogEntry{At: marker.Timestamp(now), Unit: u.Dotted, Step: step.Name, Message: msg})
	return orchestrator.SaveState(t.StatePath, st)
}
