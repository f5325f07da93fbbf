package bmad

import (
	"context"
	"strings"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// The two pipelines a BMAD project can take (orchestrator.Pipeline).
var (
	_ orchestrator.Pipeline = FiveStep{}
	_ orchestrator.Pipeline = BuildAuto{}
)

// FiveStep is the pipeline of BMAD before 6.12, or of a project pinned to
// it: create, dev, automate, review and commit, each a prompt of this tool's
// (workflows.StorySteps), read by the workflow's verifiers.
type FiveStep struct {
	C workflows.PipelineChoice
}

// Choice is the pipeline and why.
func (p FiveStep) Choice() workflows.PipelineChoice { return p.C }

// Ready is always: the five steps need nothing beyond the agent CLIs, which
// the run checks itself.
func (FiveStep) Ready(context.Context) error { return nil }

// StorySteps are the five.
func (FiveStep) StorySteps() []string { return orchestrator.StorySteps() }

// Dispatch leaves each step its own prompt.
func (FiveStep) Dispatch(context.Context, orchestrator.StoryDispatch) (orchestrator.Dispatched, error) {
	return orchestrator.Dispatched{}, nil
}

// Outcome leaves each step to its verifier.
func (FiveStep) Outcome(context.Context, orchestrator.StoryDispatch, orchestrator.StepResult) orchestrator.StepOutcome {
	return orchestrator.StepOutcome{}
}

// Land leaves the commit to the run: the story's changes in the tree.
func (FiveStep) Land(context.Context, orchestrator.StoryDispatch, *orchestrator.CommitRequest) error {
	return nil
}

// For returns the pipeline a choice names; a build-auto pipeline works on
// the project at root with git (its bookkeeping and landing).
// folder, when set, runs stories mode on it.
func For(c workflows.PipelineChoice, root string, git func(run, dir string) StoryGit, folder *Folder) orchestrator.Pipeline {
	if c.Pipeline == workflows.PipelineBuildAuto {
		return BuildAuto{C: c, Root: root, Git: git, Folder: folder}
	}
	return FiveStep{C: c}
}

// PipelineText is the choice in one line, its warnings after it.
func PipelineText(c workflows.PipelineChoice) string {
	s := "Pipeline: " + c.String()
	for _, w := range c.Warnings {
		s += "\nwarning: " + w
	}
	return strings.TrimSpace(s)
}
