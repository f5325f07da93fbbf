package bmad

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// Escalation codes of stories mode.
const (
	// CodeDoneReview: a done_checkpoint story landed; the run pauses for a
	// person before the next story.
	CodeDoneReview = "done_review"
	// CodeStorySpecAmbiguous: several files stories/<id>-*.md.
	CodeStorySpecAmbiguous = "story_spec_ambiguous"
)

var (
	_ orchestrator.LandingCheckpoint = BuildAuto{}
	_ orchestrator.Replanner         = BuildAuto{}
)

// FolderPrompt is the worker's folder+id dispatch of a story.
func FolderPrompt(folder, id string) string {
	return fmt.Sprintf("Spec folder: %s. Story id: %s.", folder, id)
}

// folderDir is the spec folder as seen from the story's folder (its
// worktree, or the project).
func (p BuildAuto) folderDir(s *story) string {
	rel := p.Folder.Rel()
	if filepath.IsAbs(rel) {
		return rel
	}
	return s.abs(rel)
}

// folderDispatch sends the worker a stories-mode story: by folder and id
// until its spec is known, by the spec's path from then on; ` Halt after
// planning.` on a spec_checkpoint story's first leg (or with
// --plan-checkpoint); the entry's invoke_dev_with verbatim after a
// newline. The first dispatch records the story's base. There is no board
// to move: nothing is committed before the worker starts.
func (p BuildAuto) folderDispatch(ctx context.Context, d orchestrator.StoryDispatch, s *story, spec workflows.Spec, out orchestrator.Dispatched) (orchestrator.Dispatched, error) {
	entry, ok := p.Folder.Entry(d.Story.Key)
	if !ok {
		return out, &orchestrator.Blocker{Code: CodeBuildAutoBlocked,
			Err:    fmt.Errorf("story %s is no longer in %s/%s", d.Story.Dotted, p.Folder.Rel(), workflows.StoriesFile),
			Action: "Put the story back in stories.yaml, or start a new run for the list as it is now (`story-automator run --spec " + p.Folder.Rel() + "`)."}
	}
	if d.Spec == "" {
		// A spec left from before: ambiguous, or the worker's skeleton,
		// escalates before any session is spent on it.
		if _, stop := p.folderSpec(d, s, orchestrator.StepResult{}); stop != nil && stop.Blocker != nil {
			return out, stop.Blocker
		}
	}
	if s.git == nil {
		return out, errors.New("the build-auto pipeline has no git")
	}
	if d.Base == "" {
		head, err := s.git.Head(ctx)
		if err != nil {
			return out, err
		}
		out.Base, out.Before = head, []string{}
	}
	prompt, err := workerPrompt(d, FolderPrompt(p.Folder.Rel(), entry.ID), spec, entry.SpecCheckpoint || d.PlanCheckpoint, &out)
	if err != nil {
		return out, err
	}
	if entry.InvokeDevWith != "" {
		prompt += "\n" + entry.InvokeDevWith
	}
	out.Prompt = prompt
	return out, nil
}

// folderSpec is the story's spec, folder-relative: the recorded one, else
// the one stories/<id>-*.md ("" = none yet). It stops the reading (stop
// set) when there are several, when the one is the worker's pre-planning
// skeleton (<id>-unresolved.md, <id>-ambiguous.md), or when there is none
// after a session.
func (p BuildAuto) folderSpec(d orchestrator.StoryDispatch, s *story, res orchestrator.StepResult) (string, *orchestrator.StepOutcome) {
	id := d.Story.Key
	path := d.Spec
	if path == "" {
		found, err := workflows.StorySpec(p.folderDir(s), id)
		if err != nil {
			code := CodeBuildAutoBlocked
			if errors.Is(err, workflows.ErrStorySpecAmbiguous) {
				code = CodeStorySpecAmbiguous
			}
			return "", &orchestrator.StepOutcome{Blocker: &orchestrator.Blocker{Code: code, Err: err,
				Action: conditionRow("ambiguous story file match").action + " Then run `story-automator run --resume`."}}
		}
		if found == "" {
			if res.FinalState == "" {
				return "", nil
			}
			return "", p.noFolderSpec(d, res)
		}
		path = s.rel(found)
	}
	if workflows.SentinelSpec(path, id) {
		return "", &orchestrator.StepOutcome{Blocker: sentinelBlocker(d, s, path)}
	}
	return path, nil
}

// sentinelBlocker escalates the worker's pre-planning skeleton spec,
// naming it, its condition and the fix.
func sentinelBlocker(d orchestrator.StoryDispatch, s *story, path string) *orchestrator.Blocker {
	cond := ""
	if sp, err := workflows.ReadSpec(s.abs(path)); err == nil && sp.Result != nil {
		cond = sp.Result.BlockingCondition
	}
	if cond == "" {
		cond = resultCondition(s.abs(path))
	}
	shown := cond
	if shown == "" {
		shown = "(no blocking condition given)"
	}
	return &orchestrator.Blocker{Code: CodeBuildAutoBlocked,
		Err: fmt.Errorf("%s halted story %s before planning: %q (%s)", workflows.BuildAutoSkill, d.Story.Dotted, shown, path),
		Action: conditionRow(cond).action + " Then delete " + path +
			" (the worker's skeleton: it matches stories/" + d.Story.Key + "-*.md until removed) and run `story-automator run --resume`."}
}

// noFolderSpec is a session that left no spec: the launcher failed (the
// session's text says how), or the worker stopped before writing one.
func (p BuildAuto) noFolderSpec(d orchestrator.StoryDispatch, res orchestrator.StepResult) *orchestrator.StepOutcome {
	if why, action := launcherFailure(sessionText(res.OutputFile)); why != "" {
		return &orchestrator.StepOutcome{Blocker: &orchestrator.Blocker{Code: CodeLauncherFailed,
			Err:    fmt.Errorf("%s's launcher failed for story %s: %s (no spec)", workflows.BuildAutoSkill, d.Story.Dotted, why),
			Action: action}}
	}
	if res.FinalState == orchestrator.FinalCompleted {
		out := incomplete(fmt.Sprintf("the session ended without a spec stories/%s-*.md in %s", d.Story.Key, p.Folder.Rel()))
		return &out
	}
	return &orchestrator.StepOutcome{}
}

// folderLand squashes everything since the story's base into its one
// commit, its subject the story's id and title, the worker's messages in
// its body.
func (p BuildAuto) folderLand(ctx context.Context, d orchestrator.StoryDispatch, s *story, req *orchestrator.CommitRequest) error {
	title := req.Story.Title
	if e, ok := p.Folder.Entry(d.Story.Key); ok {
		title = e.Title
	}
	var msgs []string
	if d.Spec != "" {
		if spec, err := workflows.ReadSpec(s.abs(d.Spec)); err == nil && spec.BaselineRevision != "" {
			msgs, _ = s.git.Messages(ctx, spec.BaselineRevision)
		}
	}
	req.Subject = d.Story.Key + ": " + title
	req.Body = fmt.Sprintf("Story %s of %s, built by %s (spec %s); story-automator squashed the worker's commits:",
		d.Story.Key, p.Folder.Rel(), workflows.BuildAutoSkill, d.Spec)
	for _, m := range msgs {
		req.Body += "\n\n" + m
	}
	_, err := s.git.Squash(ctx, d.Base, *req, nil)
	return err
}

// AfterLanding pauses the run after a done_checkpoint story lands (never
// after the folder's last story).
func (p BuildAuto) AfterLanding(d orchestrator.StoryDispatch) *orchestrator.Blocker {
	if p.Folder == nil {
		return nil
	}
	e, ok := p.Folder.Entry(d.Story.Key)
	if !ok || !e.DoneCheckpoint || p.Folder.Last(e.ID) {
		return nil
	}
	return &orchestrator.Blocker{Code: CodeDoneReview,
		Err: fmt.Errorf("story %s (%s) landed; its done_checkpoint pauses the run for a review", e.ID, e.Title),
		Action: fmt.Sprintf("Review story %s's commit (`git log --grep '^%s: '`, `git show`) and its spec in %s/%s, then run `story-automator run --resume`: the run goes on with the next story.",
			e.ID, e.ID, p.Folder.Rel(), workflows.StoriesDir)}
}

// Replan sets the story's spec back to draft, so that the worker plans
// it again (run --resume --replan ID): the recorded spec, or in stories
// mode the one stories/<id>-*.md.
func (p BuildAuto) Replan(_ context.Context, d orchestrator.StoryDispatch) error {
	s, err := p.open(d)
	if err != nil {
		return err
	}
	path := d.Spec
	if path == "" && p.Folder != nil {
		if path, err = p.folderSpecPath(d, s); err != nil {
			return err
		}
	}
	if path == "" {
		return fmt.Errorf("story %s has no spec yet: its first dispatch plans it", d.Story.Dotted)
	}
	if p.Folder != nil && workflows.SentinelSpec(path, d.Story.Key) {
		return fmt.Errorf("%s is the worker's skeleton, not a plan: delete it and run `story-automator run --resume`", path)
	}
	return workflows.SetSpecStatus(s.abs(path), workflows.SpecDraft)
}

func (p BuildAuto) folderSpecPath(d orchestrator.StoryDispatch, s *story) (string, error) {
	found, err := workflows.StorySpec(p.folderDir(s), d.Story.Key)
	if err != nil || found == "" {
		return "", err
	}
	return s.rel(found), nil
}
