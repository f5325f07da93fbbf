package doctor

import (
	"context"
	"strings"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/workflows"
)

// checkBMAD reports the pipeline a run on the project takes and why, and
// whether uv and a Python it finds are there for BMAD 6.12's skills: a run
// on the build-auto pipeline refuses without them.
func checkBMAD(ctx context.Context, o Options) []Check {
	pipe := Check{Name: "pipeline"}
	choice, err := workflows.ProjectPipeline(o.Root)
	switch {
	case err != nil:
		pipe.Status, pipe.Detail, pipe.Code = Fail, err.Error(), workflows.Code(err)
		pipe.Fix = "fix the file the message names, then run `story-automator doctor` again"
	case len(choice.Warnings) > 0:
		pipe.Status, pipe.Detail = Warn, choice.Generation+": "+choice.String()+"; "+strings.Join(choice.Warnings, "; ")
		pipe.Fix = "make _bmad/bmm/config.yaml and the _bmad/config.toml layers name the same folders (re-run `bmad install`, or edit _bmad/custom/config.toml)"
	default:
		pipe.Status, pipe.Detail = OK, choice.Generation+": "+choice.String()
	}
	find := o.FindUV
	if find == nil {
		find = bmad.FindUV
	}
	u := find(ctx)
	uv := Check{Name: "uv", Status: OK, Detail: u.Text()}
	if err := u.Check(); err != nil {
		uv.Detail = err.Error()
		if blocker, ok := orchestrator.AsBlocker(err); ok {
			uv.Code, uv.Fix = blocker.Code, blocker.Action
		}
		switch {
		case choice.Pipeline == workflows.PipelineBuildAuto:
			uv.Status = Fail
		case choice.Generation == workflows.GenerationSkills:
			uv.Status = Warn
		default:
			uv.Detail += " (only BMAD 6.12's skills need it)"
		}
	}
	return []Check{pipe, uv}
}
