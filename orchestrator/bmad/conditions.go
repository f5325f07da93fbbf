package bmad

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// conditionAction is what a person does about a blocking condition the
// run cannot settle; settle, when set, is what the run does itself: it
// returns what it did ("" = it could not, a person must). wholeRun marks
// a condition of the agent, its sandbox or the project's BMAD setup, which
// every story would meet: it pauses the run; any other needs a person for
// this story alone, which parks it (run --on-escalation park).
type conditionAction struct {
	action   string
	settle   func(ctx context.Context, s *story, d orchestrator.StoryDispatch, spec string, sp workflows.Spec) (string, error)
	wholeRun bool
}

// conditions are bmad-build-auto's blocking conditions (its exact
// strings) and what each needs; docs/bmad.md lists the same, condition by
// condition.
var conditions = map[string]conditionAction{
	"no subagents":                               {action: "The agent cannot run blocking subagents, which the worker needs: run the story with an agent that can (`story-automator doctor` says which), or allow subagents in its settings.", wholeRun: true},
	"blocked spec supplied":                      {action: "The spec was already blocked when dispatched: read its last Auto Run Result and fix what it names."},
	"story already blocked":                      {action: "The spec was already blocked when dispatched: read its last Auto Run Result and fix what it names."},
	"no stories.yaml found":                      {action: "The worker found no stories.yaml: in stories mode, check that the spec folder the run names (`story-automator status`) holds it; in sprint mode, that the story's key is on the board (sprint mode dispatches the key)."},
	"story id not found in stories.yaml":         {action: "The worker found no entry for the story: in stories mode, check that the spec folder's stories.yaml lists its id (quoted); in sprint mode, that the story's key is on the board (sprint mode dispatches the key)."},
	"ambiguous story file match":                 {action: "Several specs match the story (stories/<id>-*.md): keep the one that is the story's and delete the others."},
	"unrecognized status in existing story file": {action: "Set the spec's frontmatter status to one the worker knows (draft, ready-for-dev, in-progress, in-review, done)."},
	"no epic spec found":                         {action: "The worker found no epics for the story: check that the planning artifacts hold the story's epic."},
	"unclear intent":                             {action: "The worker did not understand the dispatch: check the story's entry on the board and in the epics."},
	"context compilation verification failed": {action: "The worker's epic context did not verify: delete the epic's epic-<N>-context.md cache in the implementation artifacts.",
		settle: dropEpicContext},
	"missing previous-story continuity decision":                 {action: "An earlier story of the same epic is in review: finish it first (run it, or set its spec done by hand)."},
	"version-control metadata not writable":                      {action: "The worker could not write .git: check the agent's sandbox (workflow.yaml `sandbox`, docs/sandbox.md) and the repository's permissions.", wholeRun: true},
	"intent gap":                                                 {action: "The plan or the review found the story's intent unclear: answer the questions in the spec (a patch of an attempted change is saved in the implementation artifacts)."},
	"planned spec file disappeared before implementation":        {action: "The spec vanished between planning and implementation: restore it from git or start over."},
	"spec failed ready-for-development standard":                 {action: "The plan did not meet BMAD's ready-for-development standard: complete it as the Auto Run Result says."},
	"missing spec_file before implementation":                    {action: "The spec's plan names no spec file: complete it as the Auto Run Result says."},
	"handoff conflicts with spec":                                {action: "The plan's handoff and the spec disagree: settle which holds, in the spec."},
	"implementation verification failed":                         {action: "The implementation did not pass the worker's own verification: read the Auto Run Result, fix the code or the plan."},
	"matrix ambiguity":                                           {action: "The worker's test matrix is ambiguous: make the spec's acceptance criteria precise."},
	"matrix test audit failed":                                   {action: "The tests did not cover the matrix: read the Auto Run Result and add what it lists."},
	"review repair loop exceeded 5 iterations (non-convergence)": {action: "The review and its repairs did not converge: read the review findings in the spec and fix the code by hand."},
	"patch verification failed":                                  {action: "A review patch did not verify: read the Auto Run Result, fix the code."},
	"finalization left repository dirty": {action: "The worker left changes it did not commit: commit or remove them.",
		settle: commitOwnDirt},
	"no active review layers": {action: "BMAD's renderer found no review layer enabled: check the project's _bmad customization of bmad-build-auto.", wholeRun: true},
}

// conditionRow is the row of a condition; a free-text one needs a person
// (one that says the tree is dirty is checked for the run's own dirt).
func conditionRow(cond string) conditionAction {
	if row, ok := conditions[strings.TrimSpace(cond)]; ok {
		return row
	}
	row := conditionAction{action: "Read the spec's last Auto Run Result and settle what it asks."}
	if strings.Contains(strings.ToLower(cond), "dirty") {
		row.settle = commitOwnDirt
	}
	return row
}

// dropEpicContext removes the epic's context cache the worker could not
// verify and sets the spec back to draft: the next dispatch replans with a
// fresh context.
func dropEpicContext(_ context.Context, s *story, d orchestrator.StoryDispatch, spec string, _ workflows.Spec) (string, error) {
	cache := filepath.Join(s.specs, fmt.Sprintf("epic-%s-context.md", s.key.Epic))
	if err := os.Remove(cache); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := workflows.SetSpecStatus(spec, workflows.SpecDraft); err != nil {
		return "", err
	}
	return fmt.Sprintf("removed the epic context cache %s and set %s back to draft", s.rel(cache), s.rel(spec)), nil
}

// commitOwnDirt settles a dirty tree that only the run made dirty (its
// board): it commits that as bookkeeping and sets the spec back to review.
// Anyone else's change is a person's.
func commitOwnDirt(ctx context.Context, s *story, d orchestrator.StoryDispatch, spec string, sp workflows.Spec) (string, error) {
	dirty, err := s.git.Dirty(ctx)
	if err != nil || len(dirty) == 0 {
		return "", err
	}
	for _, p := range dirty {
		if p != s.board() {
			return "", nil
		}
	}
	if err := s.git.CommitPaths(ctx, "story-automator: the board of story "+d.Story.Dotted, dirty); err != nil {
		return "", err
	}
	back := workflows.SpecDraft
	if sp.BaselineRevision != "" {
		back = workflows.SpecInReview
	}
	if err := workflows.SetSpecStatus(spec, back); err != nil {
		return "", err
	}
	return fmt.Sprintf("committed the run's own change to %s and set %s back to %s", s.board(), s.rel(spec), back), nil
}
