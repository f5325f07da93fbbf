package dashboard

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/story-automator/story-automator/workflows"
)

// The header says which pipeline a run takes: with no run, the pipeline and
// why (and that the BMAD files disagree, where they do); with a run, its name
// beside the spend.
func TestHeaderSaysWhichPipeline(t *testing.T) {
	choice := &workflows.PipelineChoice{Pipeline: workflows.PipelineBuildAuto, Why: "bmad-build-auto is installed (.claude/skills)",
		Warnings: []string{"implementation_artifacts: the layers disagree"}}
	noRun := Snapshot{}
	noRun.Status.Pipeline = choice
	out := ansi.Strip(New(fixedSource(), Controls{}, false).WithSnapshot(noRun, 120, 24).Render())
	if !strings.Contains(out, "pipeline build-auto (bmad-build-auto is installed (.claude/skills)) · 1 warning(s): story-automator status") {
		t.Fatalf("no-run header:\n%s", out)
	}
	run := snapshotOf(fixtureState(4))
	run.Status.Pipeline = &workflows.PipelineChoice{Pipeline: workflows.PipelineFiveStep, Why: "no _bmad/config.toml"}
	out = ansi.Strip(New(fixedSource(), Controls{}, false).WithSnapshot(run, 120, 24).Render())
	if line := strings.Split(out, "\n")[1]; !strings.HasSuffix(strings.TrimRight(line, " "), "· pipeline five-step") {
		t.Fatalf("run header's second line %q:\n%s", line, out)
	}
	// Stories mode says so, and its folder.
	run.Status.Pipeline = &workflows.PipelineChoice{Pipeline: workflows.PipelineBuildAuto, Why: "installed", Mode: workflows.StoriesModeText("specs/a")}
	out = ansi.Strip(New(fixedSource(), Controls{}, false).WithSnapshot(run, 120, 24).Render())
	if line := strings.Split(out, "\n")[1]; !strings.HasSuffix(strings.TrimRight(line, " "), "· pipeline build-auto, stories mode, folder specs/a") {
		t.Fatalf("stories-mode header's second line %q:\n%s", line, out)
	}
}
