package wire

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/workflows"
)

// Codes of a stories-mode run that cannot start.
const (
	CodeStoriesNotFound   = "stories_not_found"
	CodeStoriesNeedWorker = "stories_mode_unavailable"
)

// StoriesFolder is the spec folder a run works through in BMAD 6.12's
// stories mode (nil: sprint mode): --spec (relative to the project or
// absolute), else a resumed run's own, else — a new run on a project
// with no sprint board — the one folder with a stories.yaml under the
// output, planning and implementation folders; several are refused with
// their list. Its stories.yaml is read and checked (stories_invalid).
func StoriesFolder(o orchestrator.Options, proj *workflows.Layout) (*bmad.Folder, error) {
	spec := o.Spec
	if spec == "" && o.Resume {
		if cfg, err := orchestrator.RecordedConfig(o.ProjectRoot, o.Getenv); err == nil {
			spec = cfg.Spec
		}
	}
	if spec == "" && !o.Resume && o.Leftovers == nil { // a sweep works no spec folder's stories
		found, all, err := proj.DiscoverSpecFolder()
		if err != nil && errors.Is(err, workflows.ErrSpecFolder) {
			var rel []string
			for _, f := range all {
				rel = append(rel, relTo(proj.Root, f))
			}
			return nil, &coded.Error{Code: workflows.Code(err),
				Message: fmt.Sprintf("%d spec folders have a %s and there is no sprint board: %s", len(all), workflows.StoriesFile, strings.Join(rel, ", ")),
				Action:  fmt.Sprintf("Name the one to run: `story-automator run --spec %s`.", rel[0]), Exit: coded.ExitUsage}
		}
		if err != nil {
			return nil, coded.Fail(workflows.Code(err), "%v", err)
		}
		if found == "" {
			return nil, nil
		}
		spec = found
	}
	if spec == "" {
		return nil, nil
	}
	f, err := bmad.OpenFolder(o.ProjectRoot, spec)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &coded.Error{Code: CodeStoriesNotFound,
			Message: fmt.Sprintf("no %s in %s", workflows.StoriesFile, spec),
			Action:  "Give --spec the spec folder that holds stories.yaml (relative to the project, or absolute), or write its stories.yaml (BMAD's bmad-spec Story Breakdown).",
			Exit:    coded.ExitUsage}
	case err != nil:
		return nil, &coded.Error{Code: workflows.Code(err), Message: err.Error(),
			Action: "Fix each line named in stories.yaml (see docs/running-stories.md, stories mode), then run again: nothing was started."}
	}
	return &f, nil
}

func relTo(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

// storiesMode settles a run over a spec folder: the build-auto pipeline
// only, one story at a time (a --parallel above 1 is said once and set to
// 1), in the project's own tree; the folder recorded for --resume.
func storiesMode(o orchestrator.Options, choice *workflows.PipelineChoice, f *bmad.Folder, p Process) (orchestrator.Options, error) {
	if choice.Pipeline != workflows.PipelineBuildAuto {
		return o, &coded.Error{Code: CodeStoriesNeedWorker,
			Message: fmt.Sprintf("stories mode (%s) needs BMAD 6.12's %s, and this project takes the %s pipeline (%s)", f.Rel(), workflows.BuildAutoSkill, choice.Pipeline, choice.Why),
			Action:  "Install BMAD 6.12 in the project (`npx bmad-method install`), then run again.", Exit: coded.ExitUsage}
	}
	if o.Epic != "" || (o.Stories != "" && o.Stories != "all") {
		return o, coded.Usage("stories mode (%s) runs every story of its stories.yaml, in its order; drop --epic and --stories", f.Rel())
	}
	if o.Isolate == orchestrator.IsolateWorktree {
		return o, coded.Usage("stories mode runs its stories one at a time in the project's own tree: drop --isolate worktree")
	}
	if o.Parallel > 1 {
		p.Log.Warn().Msgf("stories mode runs one story at a time (each depends on the one before): --parallel %d is not used", o.Parallel)
		o.Parallel = 1
	}
	o.Spec = f.Rel()
	choice.Mode = workflows.StoriesModeText(f.Rel())
	return o, nil
}
