package bmad

import (
	"context"
	"fmt"
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

// CodeBuildAutoUnsupported is the refusal of a run on the build-auto
// pipeline, which this version cannot drive yet.
const CodeBuildAutoUnsupported = "build_auto_unsupported"

// BuildAuto is BMAD 6.12's pipeline: its worker skill, bmad-build-auto,
// once per story. This version checks what the worker needs on the machine
// (uv and a Python it finds) and then refuses the run, naming the five-step
// pin that drives the project today.
type BuildAuto struct {
	C workflows.PipelineChoice
	// Toolchain finds uv and its Python (FindUV when nil).
	Toolchain func(ctx context.Context) UV
}

// Choice is the pipeline and why.
func (p BuildAuto) Choice() workflows.PipelineChoice { return p.C }

// Ready checks uv and its Python (uv_missing, uv_python_missing), then
// refuses with build_auto_unsupported.
func (p BuildAuto) Ready(ctx context.Context) error {
	find := p.Toolchain
	if find == nil {
		find = FindUV
	}
	if err := find(ctx).Check(); err != nil {
		return err
	}
	return &orchestrator.Blocker{Code: CodeBuildAutoUnsupported,
		Err: fmt.Errorf("this project is on the build-auto pipeline (%s), which this version of story-automator cannot run yet", p.C.Why),
		Action: fmt.Sprintf("Add `pipeline: %s` to %s to drive it with story-automator's own five steps (create, dev, automate, review, commit: story files with a Status: line, not BMAD 6.12 specs), or run its stories with BMAD's own %s until a story-automator release supports the build-auto pipeline.",
			workflows.PipelineFiveStep, workflows.PolicyFile, workflows.BuildAutoSkill)}
}

// For returns the pipeline a choice names.
func For(c workflows.PipelineChoice) orchestrator.Pipeline {
	if c.Pipeline == workflows.PipelineBuildAuto {
		return BuildAuto{C: c}
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
