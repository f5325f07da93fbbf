package bmad

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// RetroSkill is BMAD 6.12's retrospective skill; `-H <epic>` (or `-H <spec
// folder>`) is its headless, orchestrator-facing form.
const RetroSkill = "bmad-retrospective"

// Retro is BMAD 6.12's retrospective with a verdict
// (orchestrator.Retrospective): the skill dispatched headless in each
// agent's skill form, its document's frontmatter verdict read, the board
// set right when the child could not run BMAD's own script.
type Retro struct {
	Files Files
	// Now stamps the board (time.Now when nil).
	Now func() time.Time
}

var _ orchestrator.Retrospective = Retro{}

// Prompt is `bmad-retrospective -H <target>` in the agent's skill form.
func (r Retro) Prompt(agentName, target string) (string, error) {
	p, ok := agent.SkillPrompt(agentName, RetroSkill, "-H "+target)
	if !ok {
		return "", &orchestrator.Blocker{Code: orchestrator.CodeRetroUnsupported,
			Err:    fmt.Errorf("agent %s cannot be told to run a skill, so it cannot hold %s", agentName, RetroSkill),
			Action: "Give the retro step an agent that runs skills (workflow.yaml `steps.retro.agent`), or hold the retrospective by hand and run `story-automator run --resume`."}
	}
	return p, nil
}

// Settle reads the retrospective's document — {implementation_artifacts}/
// epic-<N>-retro-*.md in sprint mode (the newest), <folder>/RETROSPECTIVE.md
// in stories mode — and, in sprint mode, puts it on the board when the
// child did not (workflows.Layout.RecordRetro).
func (r Retro) Settle(epic, target string) (orchestrator.RetroVerdict, error) {
	p := r.Files.P
	var doc string
	if target != "" && target != epic {
		doc = target
		if !filepath.IsAbs(doc) {
			doc = filepath.Join(p.Root, doc)
		}
		doc = filepath.Join(doc, workflows.RetroFile)
	} else {
		found, err := workflows.FindSprintRetro(p.ArtifactsDir, epic)
		if err != nil {
			return orchestrator.RetroVerdict{}, err
		}
		if found == "" {
			return orchestrator.RetroVerdict{}, fmt.Errorf("%w: the retrospective of epic %s left no epic-%s-retro-*.md in %s",
				workflows.ErrRetroInvalid, epic, epic, r.Files.rel(p.ArtifactsDir))
		}
		doc = found
	}
	ret, err := workflows.ReadRetro(doc)
	if err != nil && !errors.Is(err, workflows.ErrRetroInvalid) {
		return orchestrator.RetroVerdict{}, fmt.Errorf("%w: %v", workflows.ErrRetroInvalid, err)
	}
	if err != nil {
		return orchestrator.RetroVerdict{}, err
	}
	rel := r.Files.rel(doc)
	v := orchestrator.RetroVerdict{Document: rel, Verdict: ret.Verdict, Summary: ret.Summary, ActionItems: ret.ActionItems,
		Paths: []string{rel}}
	if target != "" && target != epic {
		return v, nil // stories mode: the retrospective touches nothing else
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	did, err := p.RecordRetro(epic, ret, rel, now())
	if err != nil {
		return v, err
	}
	if did.Changed() {
		v.Board = fmt.Sprintf("the run set epic-%s-retrospective: done and added %d action items to %s (the retrospective's child had not)",
			epic, did.ItemsAdded, r.Files.StatusFile())
	}
	v.Paths = append(v.Paths, r.Files.StatusFile())
	return v, nil
}
