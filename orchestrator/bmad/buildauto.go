package bmad

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

var _ orchestrator.Pipeline = BuildAuto{}

// Escalation codes of the build-auto pipeline.
const (
	// CodeBuildAutoBlocked: the worker halted the story blocked.
	CodeBuildAutoBlocked = "build_auto_blocked"
	// CodeLauncherFailed: the worker's launcher stopped before the worker
	// wrote anything (no spec, no result file).
	CodeLauncherFailed = "build_auto_launcher_failed"
	// CodePlanReview: a plan checkpoint; the run pauses for a person.
	CodePlanReview = "plan_review"
	// CodeNoSkillForm: the agent cannot be told to run a skill.
	CodeNoSkillForm = "skill_form_missing"
)

// BoardLine is the line every dispatch of the worker carries after the
// skill's own line: the board is the run's.
const BoardLine = "The run owns sprint-status.yaml: do not edit it; the run moves this story on the board itself."

// StoryGit is the git work the build-auto pipeline does in the project's
// folder or a story's worktree (gitvcs.StoryTree).
type StoryGit interface {
	Head(ctx context.Context) (string, error)
	// Dirty lists changed and untracked paths, the run's state left out.
	Dirty(ctx context.Context) ([]string, error)
	// CommitPaths commits these paths (folder-relative) alone.
	CommitPaths(ctx context.Context, message string, paths []string) error
	// Messages are the messages of from..HEAD, oldest first.
	Messages(ctx context.Context, from string) ([]string, error)
	// Squash makes everything since base, with paths, req's one commit.
	Squash(ctx context.Context, base string, req orchestrator.CommitRequest, paths []string) (string, error)
	// Find is req's commit of this run, when one was made (its trailers).
	Find(ctx context.Context, req orchestrator.CommitRequest) (sha string, found bool, err error)
}

// BuildAuto is BMAD 6.12's pipeline: its worker skill, bmad-build-auto,
// dispatched once per story (step dev), and again by the spec's path for a
// follow-up review the worker recommends (step review, bounded by the
// review cycles), then the story's one commit. The run is the only writer
// of sprint-status.yaml: story and epic in progress at dispatch, the story
// done as it lands, the epic done after its last story.
type BuildAuto struct {
	C workflows.PipelineChoice
	// Toolchain finds uv and its Python (FindUV when nil).
	Toolchain func(ctx context.Context) UV
	// Root is the project's root; Git the git work in a story's folder.
	Root string
	Git  func(run, dir string) StoryGit
	// Now is the board's clock (time.Now when nil).
	Now func() time.Time
	// Folder, when set, is stories mode's spec folder: folder+id dispatch,
	// no board, the story's spec the one stories/<id>-*.md (see
	// buildauto_folder.go). Nil is sprint mode.
	Folder *Folder
}

// Choice is the pipeline and why.
func (p BuildAuto) Choice() workflows.PipelineChoice { return p.C }

// Ready checks uv and its Python (uv_missing, uv_python_missing): the
// worker's launcher needs both to run BMAD's renderer. A project that pins
// the pipeline and has no renderer (the sample, shaped as 6.12 without
// BMAD's files) runs none, and needs neither.
func (p BuildAuto) Ready(ctx context.Context) error {
	if p.C.Pinned && p.Root != "" && workflows.NoRenderer(p.Root) {
		return nil
	}
	find := p.Toolchain
	if find == nil {
		find = FindUV
	}
	return find(ctx).Check()
}

// StorySteps: the worker (dev), a follow-up review when it recommends one
// (review), the story's commit.
func (BuildAuto) StorySteps() []string {
	return []string{orchestrator.StepDev, orchestrator.StepReview, orchestrator.StepCommit}
}

func (p BuildAuto) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// story is one story's folder as the pipeline works on it.
type story struct {
	dir   string
	lay   *workflows.Layout
	key   workflows.StoryKey
	specs string // where the worker writes its specs
	git   StoryGit
}

func (p BuildAuto) open(d orchestrator.StoryDispatch) (*story, error) {
	dir := d.WorkDir
	if dir == "" {
		dir = p.Root
	}
	lay, err := workflows.Open(dir)
	if err != nil {
		return nil, err
	}
	var key workflows.StoryKey
	if p.Folder == nil && d.Work == nil { // a sweep or action unit has no story key
		if key, err = workflows.ParseStoryKey(d.Story.Key); err != nil {
			return nil, err
		}
	}
	s := &story{dir: dir, lay: lay, key: key, specs: lay.ArtifactsDir}
	if gen, err := workflows.Detect(dir); err == nil {
		if sk, ok := gen.(*workflows.Skills); ok && sk.ImplementationArtifacts != "" {
			s.specs = sk.ImplementationArtifacts
		}
	}
	if p.Git != nil {
		s.git = p.Git(d.RunID, dir)
	}
	return s, nil
}

// abs is a folder-relative path made absolute.
func (s *story) abs(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(s.dir, filepath.FromSlash(rel))
}

// rel is an absolute path relative to the folder, slash-separated.
func (s *story) rel(path string) string {
	r, err := filepath.Rel(s.dir, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

func (s *story) board() string { return s.rel(s.lay.SprintStatusPath()) }

// boardKey is the story's key as the board writes it ("1-2-account-settings").
func (s *story) boardKey() string {
	if st, err := s.lay.ReadSprintStatus(); err == nil {
		if e, ok := st.Story(s.key); ok {
			return e.Key
		}
	}
	return s.key.String()
}

// Dispatch moves the story and its epic to in-progress on the board,
// commits that (the worker starts on a clean tree), lists the specs there
// are before the story's first dispatch, and sends the worker: by the
// story's key until its spec is known, by the spec's path from then on.
// The review step goes only when the worker recommended a follow-up review.
func (p BuildAuto) Dispatch(ctx context.Context, d orchestrator.StoryDispatch) (orchestrator.Dispatched, error) {
	var out orchestrator.Dispatched
	if d.Step != orchestrator.StepDev && d.Step != orchestrator.StepReview {
		return out, nil
	}
	if err := refuseWhere(d); err != nil {
		return out, err
	}
	if d.Work != nil {
		return p.dispatchWork(ctx, d)
	}
	s, err := p.open(d)
	if err != nil {
		return out, err
	}
	var spec workflows.Spec
	if d.Spec != "" {
		if spec, err = workflows.ReadSpec(s.abs(d.Spec)); err != nil {
			return out, err
		}
	}
	if d.Step == orchestrator.StepReview {
		if d.Spec == "" || !spec.FollowupReviewRecommended {
			out.Skip = "the worker recommended no follow-up review"
			return out, nil
		}
	}
	if p.Folder != nil {
		return p.folderDispatch(ctx, d, s, spec, out)
	}
	if err := p.bookkeeping(ctx, d, s, &out); err != nil {
		return out, err
	}
	prompt, err := workerPrompt(d, s.boardKey(), spec, d.PlanCheckpoint, &out)
	if err != nil {
		return out, err
	}
	out.Prompt = prompt + "\n" + BoardLine
	return out, nil
}

// workerPrompt is the worker's dispatch in the agent's skill form: fresh
// (a board key, a folder and id, free text) until the spec is known, the
// spec's path from then on; with "Halt after planning." on a dev step that
// plans (planHalt, and a spec not yet past draft), which it records in
// out.Halt.
func workerPrompt(d orchestrator.StoryDispatch, fresh string, spec workflows.Spec, planHalt bool, out *orchestrator.Dispatched) (string, error) {
	arg := fresh
	if d.Spec != "" {
		arg = d.Spec
	}
	out.Halt = d.Step == orchestrator.StepDev && planHalt && (d.Spec == "" || spec.Status == workflows.SpecDraft)
	if out.Halt {
		arg += " " + HaltAfterPlanning
	}
	prompt, ok := agent.SkillPrompt(d.Agent, workflows.BuildAutoSkill, arg)
	if !ok {
		return "", &orchestrator.Blocker{Code: CodeNoSkillForm,
			Err:    fmt.Errorf("the %s agent cannot be told to run a skill, and the build-auto pipeline dispatches %s", d.Agent, workflows.BuildAutoSkill),
			Action: "Run with an agent whose profile has a skill form (story-automator doctor lists them), then run `story-automator run --resume`."}
	}
	return prompt, nil
}

// CodeBuildAutoWhere: the build-auto pipeline cannot run a story where the
// run would send it.
const CodeBuildAutoWhere = "build_auto_unsupported_here"

// refuseWhere refuses what this version of the pipeline does not run: a
// story on another machine (hosts:), whose runner sends the five steps'
// prompts, and stories side by side in one working tree, where one
// story's squash would take another's commits.
func refuseWhere(d orchestrator.StoryDispatch) error {
	switch {
	case d.Host != "" && d.Host != orchestrator.LocalHost:
		return &orchestrator.Blocker{Code: CodeBuildAutoWhere,
			Err:    fmt.Errorf("story %s was sent to host %s; the build-auto pipeline runs stories on this machine only", d.Story.Dotted, d.Host),
			Action: "Run with `--host local` (or disable the other hosts in workflow.yaml), then run `story-automator run --resume`."}
	case d.SharedTree:
		return &orchestrator.Blocker{Code: CodeBuildAutoWhere,
			Err:    fmt.Errorf("stories side by side in one working tree: the build-auto pipeline squashes each story's commits, which would take another's"),
			Action: "Run with `--isolate worktree` (or `--parallel 1`): `story-automator run --resume --isolate worktree`."}
	}
	return nil
}

// HaltAfterPlanning is the phrase that stops the worker at ready-for-dev.
const HaltAfterPlanning = "Halt after planning."

// bookkeeping records the story's start: its base commit, the story's
// specs there are (first dispatch; see workflows.StorySprintSpecs) and the
// worker's result files there are (resultEntry: only a new one is this
// story's), story
// and epic in progress on the board, the board committed. In a story's
// worktree the user's own board says so too.
func (p BuildAuto) bookkeeping(ctx context.Context, d orchestrator.StoryDispatch, s *story, out *orchestrator.Dispatched) error {
	if s.git == nil {
		return errors.New("the build-auto pipeline has no git")
	}
	if d.Base == "" {
		head, err := s.git.Head(ctx)
		if err != nil {
			return err
		}
		out.Base = head
		specs, err := workflows.StorySprintSpecs(s.specs, s.key)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		out.Before = []string{}
		for _, sp := range specs {
			out.Before = append(out.Before, s.rel(sp))
		}
		_, results := s.results()
		out.Before = append(out.Before, results...)
	}
	if d.WorkDir != "" && d.WorkDir != p.Root {
		root, err := p.open(orchestrator.StoryDispatch{RunID: d.RunID, Story: d.Story})
		if err != nil {
			return err
		}
		if err := p.start(ctx, d, root); err != nil {
			return err
		}
	}
	return p.start(ctx, d, s)
}

// start moves the story to in-progress on a folder's board and commits it.
func (p BuildAuto) start(ctx context.Context, d orchestrator.StoryDispatch, s *story) error {
	if err := s.lay.StartStory(s.key, p.now()); err != nil {
		return err
	}
	dirty, err := s.git.Dirty(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(dirty, s.board()) {
		return nil
	}
	msg := fmt.Sprintf("story-automator: story %s in progress\n\nThe run moved %s and its epic to in-progress on the board before dispatching %s.",
		d.Story.Dotted, s.boardKey(), workflows.BuildAutoSkill)
	return s.git.CommitPaths(ctx, msg, []string{s.board()})
}

// Outcome reads the worker's end from the files: the spec's frontmatter
// status (authoritative) and its last Auto Run Result.
func (p BuildAuto) Outcome(ctx context.Context, d orchestrator.StoryDispatch, res orchestrator.StepResult) orchestrator.StepOutcome {
	var out orchestrator.StepOutcome
	if d.Step != orchestrator.StepDev && d.Step != orchestrator.StepReview {
		return out
	}
	s, err := p.open(d)
	if err != nil {
		return incomplete(err.Error())
	}
	path := d.Spec
	if path == "" && d.Work != nil {
		found, blocker := s.newWorkSpec(d)
		switch {
		case blocker != nil:
			return orchestrator.StepOutcome{Blocker: blocker}
		case found == "":
			return p.noSpec(d, s, res)
		}
		path, out.Spec = found, found
	}
	if p.Folder != nil && d.Work == nil {
		found, stop := p.folderSpec(d, s, res)
		if stop != nil {
			return *stop
		}
		if found == "" {
			return incomplete("the story has no spec yet")
		}
		if found != path {
			out.Spec = found
		}
		path = found
	}
	if path == "" {
		before := make([]string, len(d.Before))
		for i, b := range d.Before {
			before[i] = s.abs(b)
		}
		found, err := workflows.NewSprintSpec(s.specs, before, s.key)
		if err != nil {
			return orchestrator.StepOutcome{Blocker: &orchestrator.Blocker{Code: CodeBuildAutoBlocked, Err: err,
				Action: "Keep the one spec of the story, delete the others, then run `story-automator run --resume`."}}
		}
		if found == "" {
			return p.noSpec(d, s, res)
		}
		path = s.rel(found)
		out.Spec = path
	}
	spec, err := workflows.ReadSpec(s.abs(path))
	if err != nil {
		out.FinalState, out.Reason = orchestrator.FinalIncomplete, "read the spec: "+err.Error()
		return out
	}
	switch {
	case spec.Status == workflows.SpecDone:
		p.done(ctx, d, s, spec, res, &out)
	case spec.Status == workflows.SpecBlocked:
		p.blocked(ctx, d, s, path, spec, &out)
	case spec.Status == workflows.SpecReadyForDev && d.Halt:
		out.FinalState, out.Reason = orchestrator.FinalIncomplete, "planned: the spec is ready-for-dev"
		out.Pause = &orchestrator.Blocker{Code: CodePlanReview,
			Err:    fmt.Errorf("story %s is planned: review its plan in %s (status ready-for-dev)", d.Story.Dotted, path),
			Action: fmt.Sprintf("Read %s, edit the plan if need be (keep its status ready-for-dev), then run `story-automator run --resume`: the worker implements it.", path)}
	case spec.DiedMidFlight() || spec.Status == workflows.SpecReadyForDev:
		out.FinalState = orchestrator.FinalIncomplete
		if res.FinalState != orchestrator.FinalCompleted && res.FinalState != "" {
			out.FinalState = res.FinalState
		}
		out.Reason = fmt.Sprintf("the worker stopped mid-flight with the spec %s; the next dispatch resumes %s", spec.Status, path)
	default:
		out.Blocker = &orchestrator.Blocker{Code: CodeBuildAutoBlocked,
			Err:    fmt.Errorf("spec %s has the status %q, which bmad-build-auto does not write", path, spec.Status),
			Action: fmt.Sprintf("Set the status in %s's frontmatter to one of draft, ready-for-dev, in-progress, in-review, done, then run `story-automator run --resume`.", path)}
	}
	return out
}

func incomplete(reason string) orchestrator.StepOutcome {
	return orchestrator.StepOutcome{FinalState: orchestrator.FinalIncomplete, Reason: reason}
}

// done counts a done spec when the tree is clean, the worker committed
// since its baseline, the step's command verifiers passed (res) and, on a
// follow-up review, no further one is recommended.
func (p BuildAuto) done(ctx context.Context, d orchestrator.StoryDispatch, s *story, spec workflows.Spec, res orchestrator.StepResult, out *orchestrator.StepOutcome) {
	fail := func(reason string) { out.FinalState, out.Reason = orchestrator.FinalIncomplete, reason }
	dirty, err := s.git.Dirty(ctx)
	switch {
	case err != nil:
		fail("list the tree's changes: " + err.Error())
		return
	case len(dirty) > 0:
		fail("the spec is done but the worker left the tree dirty: " + strings.Join(dirty, ", "))
		return
	}
	if spec.BaselineRevision == "" {
		fail("the spec is done without a baseline_revision")
		return
	}
	msgs, err := s.git.Messages(ctx, spec.BaselineRevision)
	switch {
	case err != nil:
		fail("read the commits since the baseline " + spec.BaselineRevision + ": " + err.Error())
		return
	case len(msgs) == 0:
		fail("the spec is done but nothing was committed since its baseline " + spec.BaselineRevision)
		return
	}
	if res.FinalState != orchestrator.FinalCompleted {
		out.FinalState, out.Reason = res.FinalState, res.Reason
		return
	}
	if d.Step == orchestrator.StepReview && spec.FollowupReviewRecommended {
		fail("the follow-up review recommends another one")
		return
	}
	out.FinalState = orchestrator.FinalCompleted
	out.Reason = fmt.Sprintf("spec done, %d commit(s) since its baseline, the tree clean", len(msgs))
	if res.Reason != "" {
		out.Reason += "; " + res.Reason
	}
}

// blocked escalates with the blocking condition and what to do, or
// settles what the run can itself and goes on.
func (p BuildAuto) blocked(ctx context.Context, d orchestrator.StoryDispatch, s *story, path string, spec workflows.Spec, out *orchestrator.StepOutcome) {
	cond := ""
	if spec.Result != nil {
		cond = spec.Result.BlockingCondition
	}
	row := conditionRow(cond)
	if row.settle != nil {
		if done, err := row.settle(ctx, s, d, s.abs(path), spec); err == nil && done != "" {
			out.FinalState, out.Reason, out.Retry = orchestrator.FinalIncomplete, "blocked: "+cond+"; "+done, done
			return
		}
	}
	shown := cond
	if shown == "" {
		shown = "(no blocking condition given)"
	}
	out.Blocker = &orchestrator.Blocker{Code: CodeBuildAutoBlocked, Park: !row.wholeRun,
		Err:    fmt.Errorf("%s blocked story %s: %q (spec %s)", workflows.BuildAutoSkill, d.Story.Dotted, shown, path),
		Action: row.action + " " + fmt.Sprintf(retryBlocked, d.Story.Dotted, path)}
}

// retryBlocked ends every blocked story's action: the worker never resumes
// a blocked spec, which `resolve` re-arms.
const retryBlocked = "`story-automator resolve %s` works it through with the agent and re-arms the story (`--no-interactive` after a fix of your own); " +
	"or set `status:` in %s back to draft (replan) or ready-for-dev (implement), or delete the spec to start over. Then run `story-automator run --resume`."

// noSpec is an attempt that left no spec: a result file not there at the
// story's first dispatch says why the worker halted; else the launcher
// failed, and the session's text says how.
func (p BuildAuto) noSpec(d orchestrator.StoryDispatch, s *story, res orchestrator.StepResult) orchestrator.StepOutcome {
	if news := s.newResults(d.Before); len(news) > 0 {
		r := news[0]
		spec, err := workflows.ReadSpec(r)
		cond := ""
		if err == nil && spec.Result != nil {
			cond = spec.Result.BlockingCondition
		}
		if cond == "" {
			cond = resultCondition(r)
		}
		return orchestrator.StepOutcome{Blocker: &orchestrator.Blocker{Code: CodeBuildAutoBlocked, Park: !conditionRow(cond).wholeRun,
			Err:    fmt.Errorf("%s halted story %s before writing a spec: %q (%s)", workflows.BuildAutoSkill, d.Story.Dotted, cond, s.rel(r)),
			Action: conditionRow(cond).action + " Then delete " + s.rel(r) + " and run `story-automator run --resume`."}}
	}
	text := sessionText(res.OutputFile)
	if why, action := launcherFailure(text); why != "" {
		return orchestrator.StepOutcome{Blocker: &orchestrator.Blocker{Code: CodeLauncherFailed,
			Err:    fmt.Errorf("%s's launcher failed for story %s: %s (no spec, no result file)", workflows.BuildAutoSkill, d.Story.Dotted, why),
			Action: action}}
	}
	if res.FinalState == orchestrator.FinalCompleted {
		return incomplete("the session ended without a spec or a result file from " + workflows.BuildAutoSkill)
	}
	return orchestrator.StepOutcome{}
}

// resultCondition is the "Blocking condition:" line of a result file whose
// frontmatter did not parse.
func resultCondition(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Blocking condition:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// sessionText is what a session printed, as its output file holds it.
func sessionText(path string) string {
	if path == "" {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(data)
}

// launcherSigns are the launcher's failures as a session shows them: the
// words on the screen or in the transcript, what failed, what to do.
var launcherSigns = []struct {
	signs  []string
	why    string
	action string
}{
	{[]string{"uv: command not found", "uv: not found", "command not found: uv", "uv: No such file"},
		"uv is missing from the agent's PATH",
		"Install uv where the agent's shell finds it (" + UVInstall + "), check `story-automator doctor`, then run `story-automator run --resume`."},
	{[]string{"No interpreter found for Python"},
		"uv finds no Python >= 3.11",
		"Install one (`uv python install 3.11`), then run `story-automator run --resume`."},
	{[]string{"render_skill.py: No such file", "render_skill.py': [Errno 2]", "can't open file", "Failed to spawn: "},
		"BMAD's renderer (_bmad/scripts/render_skill.py) is missing",
		"Reinstall BMAD in the project (`npx bmad-method install`), then run `story-automator run --resume`."},
	{[]string{"no " + workflows.BuildAutoSkill + " skill", "Unknown skill", "Unknown slash command", "skill not found", "Unknown command: /" + workflows.BuildAutoSkill},
		"the agent did not find the " + workflows.BuildAutoSkill + " skill",
		"Install BMAD's skills for this agent (`npx bmad-method install --tools …`; `story-automator doctor` lists the skill folders), then run `story-automator run --resume`."},
}

// launcherFailure names the launcher's failure a session's text shows ("" = none).
func launcherFailure(text string) (why, action string) {
	for _, s := range launcherSigns {
		for _, sign := range s.signs {
			if strings.Contains(text, sign) {
				return s.why + " (the session says: " + strings.TrimSpace(lineWith(text, sign)) + ")", s.action
			}
		}
	}
	return "", ""
}

func lineWith(text, sign string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sign) {
			if len(l) > 200 {
				l = l[:200]
			}
			return l
		}
	}
	return sign
}

// Land records the story done on its folder's board (the epic too after
// its last story) and squashes everything committed since the story's base
// (the run's bookkeeping, the worker's commits) into the story's one
// commit: its subject leads with the story's key, its body keeps the
// worker's messages.
func (p BuildAuto) Land(ctx context.Context, d orchestrator.StoryDispatch, req *orchestrator.CommitRequest) error {
	if d.Base == "" {
		return nil
	}
	if d.Work != nil {
		return p.landWork(ctx, d, req)
	}
	s, err := p.open(d)
	if err != nil {
		return err
	}
	if p.Folder != nil {
		return p.folderLand(ctx, d, s, req)
	}
	if err := s.lay.FinishStory(s.key, p.now()); err != nil {
		return err
	}
	var msgs []string
	specRel := d.Spec
	if specRel != "" {
		if spec, err := workflows.ReadSpec(s.abs(specRel)); err == nil && spec.BaselineRevision != "" {
			msgs, _ = s.git.Messages(ctx, spec.BaselineRevision)
		}
	}
	title := strings.TrimSpace(req.Story.Title)
	req.Subject = s.boardKey()
	if title != "" {
		req.Subject += ": " + title
	}
	body := fmt.Sprintf("Built by %s (spec %s); story-automator moved the board and squashed the worker's commits:", workflows.BuildAutoSkill, specRel)
	for _, m := range msgs {
		body += "\n\n" + m
	}
	req.Body = body
	_, err = s.git.Squash(ctx, d.Base, *req, append([]string{s.board()}, s.collectDeferred(d)...))
	return err
}

// collectDeferred appends the done spec's deferred findings to BMAD's
// deferred-work.md, to land in the story's commit, and returns the ledger
// (folder-relative) when it added to it. Only where the story works in the
// project's own folder: stories in worktrees all append to the one ledger,
// and their landings would conflict on it, so there `story-automator
// deferred` collects them (it reads every done spec, each finding once). A
// ledger it cannot read is left as it is: the findings stay in the spec,
// and `story-automator deferred` names the line to fix.
func (s *story) collectDeferred(d orchestrator.StoryDispatch) []string {
	if d.WorkDir != "" || d.Spec == "" {
		return nil
	}
	got, err := workflows.CollectDeferred(s.lay, s.abs(d.Spec))
	if err != nil || len(got.Added) == 0 {
		return nil
	}
	return []string{s.rel(got.Path)}
}
