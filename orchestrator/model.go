package orchestrator

import (
	"context"
	"sort"
	"time"

	"github.com/story-automator/story-automator/internal/verify"
	"github.com/story-automator/story-automator/spend"
	"github.com/story-automator/story-automator/workflows"
)

// Workflow steps, as workflows names them: a story goes through StorySteps
// in order; StepRetro runs once at the end of an epic.
const (
	StepCreate   = workflows.StepCreate
	StepDev      = workflows.StepDev
	StepAutomate = workflows.StepAutomate
	StepReview   = workflows.StepReview
	StepCommit   = workflows.StepCommit
	StepRetro    = workflows.StepRetro
)

// StorySteps are the steps of one story, in order.
func StorySteps() []string { return workflows.StorySteps() }

// Final states a step attempt ends in: the monitor's (docs/reference.md, "monitor-session final states") plus
// interrupted, for an attempt the orchestrator itself abandoned (SIGINT,
// SIGKILL) which never counts against a step's retries.
const (
	FinalCompleted   = "completed"
	FinalIncomplete  = "incomplete"
	FinalCrashed     = "crashed"
	FinalStuck       = "stuck"
	FinalNotFound    = "not_found"
	FinalTimeout     = "timeout"
	FinalInterrupted = "interrupted"
	// FinalLimited is an attempt its agent's CLI gave up on at a usage
	// limit, rate limit or API fault; it never counts against retries.
	FinalLimited = "limited"
	// FinalError is an attempt that could not even start (spawn failed).
	FinalError = "error"
)

// Agent roles: an attempt runs the primary agent or the fallback agent.
const (
	RolePrimary  = "primary"
	RoleFallback = "fallback"
)

// StoryInfo is what the project's BMAD files say about one story.
type StoryInfo struct {
	// Key is the canonical hyphen form, "1-2".
	Key string `json:"key"`
	// Dotted is the form people write, "1.2".
	Dotted string `json:"dotted"`
	Epic   string `json:"epic"`
	Title  string `json:"title,omitempty"`
	// Status is the sprint-status value ("" when the story has no entry).
	Status string `json:"status,omitempty"`
	// HasFile reports whether the story's story file exists.
	HasFile bool `json:"hasFile,omitempty"`
	// DependsOn holds the canonical keys of the stories this one needs done first.
	DependsOn []string `json:"dependsOn,omitempty"`
	// Files are the story's story files, FileList the paths its story file's
	// File List names (both relative to the project root, slash-separated).
	Files    []string `json:"files,omitempty"`
	FileList []string `json:"fileList,omitempty"`
}

// Backlog is the view of the BMAD files a run needs: the stories it works
// through and the files that record them.
type Backlog interface {
	// Select returns the stories a run over (epic, spec) works on, in key order.
	Select(epic, spec string) ([]StoryInfo, error)
	// Story re-reads one story by canonical key.
	Story(key string) (StoryInfo, error)
	// EpicStories lists every story of an epic.
	EpicStories(epic string) ([]StoryInfo, error)
	// RetroDone reports whether the epic's retrospective is already done.
	RetroDone(epic string) (bool, error)
	// MarkStoryDone records the story as done in sprint-status.yaml and its story file.
	MarkStoryDone(key string) error
	// StatusFile is sprint-status.yaml relative to the project root.
	StatusFile() string
	// StatusForCommit returns committed (the status file as last committed;
	// nil when it never was) with the entries of one unit, a story (retro
	// false) or an epic's retrospective, and of its epic set as the work tree
	// has them now: what the unit's commit records of the status file.
	StatusForCommit(committed []byte, key, epic string, retro bool) ([]byte, error)
	// StoryFileOwner returns the story whose story file path (relative to
	// the project root, slash-separated) is, from the path alone.
	StoryFileOwner(path string) (key string, ok bool)
	// FileList returns the paths the story's "File List" names (nil for a
	// story without a story file, or one the project does not know).
	FileList(key string) []string
}

// FileListKeeper is implemented by a Backlog that keeps a story file's File
// List true to its commit: KeepFileList adds to it the paths (project-relative)
// it does not name yet, and returns the story file it changed (relative, ""
// when none) and the paths it added.
type FileListKeeper interface {
	KeepFileList(key string, paths []string) (storyFile string, added []string, err error)
}

// EpicChecker is implemented by a Backlog that can tell whether the epics
// declare a story, which its create step writes from.
type EpicChecker interface {
	CheckEpicStory(key string) error
}

// Pipeline is one BMAD generation's way of taking a story through its
// steps: which steps, how their outcome is read, and what it needs on this
// machine. orchestrator/bmad implements one per pipeline; wire picks it from
// what workflows reads on disk (workflows.Generation), so the run loop
// never asks which BMAD a project has.
type Pipeline interface {
	// Choice is the pipeline's name and why this project takes it.
	Choice() workflows.PipelineChoice
	// Ready runs before a run plans anything or starts any child (a dry run
	// too): nil, or a *Blocker with its code and the action that settles it.
	Ready(ctx context.Context) error
	// StorySteps are the steps a story unit takes, in order (NewPlan).
	StorySteps() []string
	// Dispatch runs before each agent attempt at a story's step, the run's
	// commit lock held: it may move the board and commit the run's own
	// bookkeeping, and says what the attempt sends (see Dispatched).
	Dispatch(ctx context.Context, d StoryDispatch) (Dispatched, error)
	// Outcome reads how an attempt at a story's step ended from the
	// project's files; res is the monitor's view. A resumed run calls it
	// with a completed res and no session to check an escalated step.
	Outcome(ctx context.Context, d StoryDispatch, res StepResult) StepOutcome
	// Land runs before a story's commit step, the commit lock held: it may
	// move the board and make the story's one commit itself (found then by
	// Committer.Find), or change req.
	Land(ctx context.Context, d StoryDispatch, req *CommitRequest) error
}

// StoryDispatch is one story step as a Pipeline's hooks see it.
type StoryDispatch struct {
	RunID string
	Story StoryInfo
	Step  string
	Agent string
	// Cycle is the review round (review only, from 1).
	Cycle int
	// WorkDir is the project's folder the step works in ("" = the project root).
	WorkDir string
	// Spec is the spec the story's worker writes, as recorded (relative
	// to the project's folder; "" before it is known). Base is the commit
	// the story started from, before the run's first bookkeeping commit
	// for it ("" before the first dispatch).
	Spec, Base string
	// Before are the specs listed before the story's first dispatch (and
	// what else the pipeline lists then, such as a worker's result files).
	Before []string
	// Host is the machine the step runs on ("" or LocalHost: this one).
	// SharedTree: other stories may run in the same working tree at the
	// same time (--parallel above 1 without worktrees).
	Host       string
	SharedTree bool
	// Kind is the unit's kind (KindStory, or KindSweep and KindAction,
	// whose Work the worker takes as free text).
	Kind string
	Work *Work
	// PlanCheckpoint: the run pauses a story after its planning (run
	// --plan-checkpoint, workflow.yaml planCheckpoint). Halt: the last
	// dispatch asked the worker to halt after planning.
	PlanCheckpoint, Halt bool
}

// Dispatched is what a Pipeline's Dispatch settled for an attempt.
type Dispatched struct {
	// Prompt is what the attempt sends ("" = the step's own prompt).
	Prompt string
	// Skip, when set, is why the story does not need the step.
	Skip string
	// Base and Before, when set, are recorded in the unit (StoryDispatch).
	Base   string
	Before []string
	// Note is logged in the run's action log.
	Note string
	// Halt: the prompt asks the worker to halt after planning (recorded).
	Halt bool
	// Skipped are a sweep or action unit's items closed by hand since the
	// run planned them: left out of the dispatch (recorded).
	Skipped []string
}

// StepOutcome is how a Pipeline reads an attempt's end.
type StepOutcome struct {
	// FinalState and Reason replace the monitor's.
	FinalState, Reason string
	// Spec, when set, is the spec found, recorded in the unit.
	Spec string
	// Blocker, when set, escalates the step at once with its code and action.
	Blocker *Blocker
	// Pause, when set, pauses the run after the attempt with its code and
	// action (a checkpoint: no failure), the step taken up by run --resume.
	Pause *Blocker
	// Retry, when set, is what the run settled itself (logged): the step
	// goes on with another attempt.
	Retry string
}

// StepRequest is one attempt at one step of one story (or of an epic, for retro).
type StepRequest struct {
	RunID string
	// Story is the story's canonical key; for retro it is the epic id; for
	// a sweep or action unit (Kind) the unit's key, which names no story.
	Story string
	Kind  string
	Epic  string
	Step  string
	Agent string
	Role  string
	// Model is the model the step's agent runs ("" = the agent's default).
	Model string
	// Attempt counts every attempt of this step in the run, from 1.
	Attempt int
	// Cycle is the review round (review only, from 1), else 0.
	Cycle   int
	Timeout time.Duration
	// Started is called with the child session's name as soon as it exists,
	// so the state document can name it while the step runs.
	Started func(session, outputFile string)
	// WorkDir is the project in the story's git worktree ("" = the project
	// root): the child works there and the step's verifiers look there.
	WorkDir string
	// Adopt names the child session of this step that a stopped
	// orchestrator left on a remote host: the runner waits for it when it
	// still runs there instead of starting another ("" = none).
	Adopt string
	// Prompt, when set, is what the child is sent instead of the step's
	// workflow prompt (a Pipeline's Dispatch, a retrospective's skill): the
	// step's verifiers are then its command verifiers alone, the pipeline or
	// the retrospective reading the rest from the files.
	Prompt string
	// Host is the machine the attempt runs on ("" or LocalHost: this one).
	// A remote attempt works in the story's clone there and leaves WorkDir
	// holding the same files when it ends (see tmuxsteps.Remote).
	Host string
	// FromFiles: the pipeline reads the step's outcome from the files (a
	// resumed run's re-check of a step it dispatched). StepVerifier's
	// verifier is then the step's command verifiers alone, as an attempt
	// with a Prompt has them, and passes when the step has none.
	FromFiles bool
}

// StepResult is how an attempt ended, as the monitor saw it.
type StepResult struct {
	FinalState string
	Reason     string
	Session    string
	OutputFile string
	Verifier   string
	Detail     string
	// AgentTime is how long the child session ran.
	AgentTime time.Duration
	// Blocker is set when the attempt ended for a cause no retry changes
	// (the agent waits at a dialog, its CLI is gone): the step escalates at once.
	Blocker *Blocker
	// ResetsAt is, for a limited attempt, when its limit lifts (zero when
	// unknown).
	ResetsAt time.Time
	// Usage is what the agent's own record says the attempt spent (tokens;
	// the run prices them), Model the model that record names; Usage nil
	// means it could not be read, and UsageNote says why.
	Usage     *spend.Usage
	Model     string
	UsageNote string
}

// StepRunner runs the steps of a run in child sessions.
type StepRunner interface {
	// Configure takes the run's recorded settings (model, monitor
	// rechecks) before the first step.
	Configure(cfg RunConfig) error
	// RunStep runs one attempt of one step in a child session and waits for
	// its final state. When ctx ends it stops the child and returns ctx's error.
	RunStep(ctx context.Context, req StepRequest) (StepResult, error)
	// StepVerifier returns the verifier of req's step, to run once with no
	// session: a resumed run checks an escalated step first, since the human
	// may have finished it by hand (req.FromFiles: its command verifiers
	// alone). An error says why the step cannot be checked.
	StepVerifier(req StepRequest) (verify.Verifier, error)
	// CloseSession ends a child session left behind by an orchestrator
	// that was killed, so its agent cannot keep editing the project.
	CloseSession(ctx context.Context, name string) error
	// CheckAgents tells, before any step, whether each agent CLI a run will
	// use is installed and supported, and each host it may send a step to
	// runs this story-automator: a *Blocker for the first that does not.
	CheckAgents(ctx context.Context, agents []string) error
	// SweepSessions removes the files of the project's sessions that ended
	// more than olderThan before now, but those keep names; it returns the
	// names swept.
	SweepSessions(olderThan time.Duration, now time.Time, keep func(name string) bool) []string
}

// CommitRequest asks for one story's commit, or an epic's retrospective's.
type CommitRequest struct {
	RunID string
	Story StoryInfo
	Retro bool
	// Paths are the project-relative paths the commit takes from the work
	// tree, those of them that have changed (see ownership.go).
	Paths []string
	// Contents are project-relative paths committed with this content
	// instead of the work tree's (sprint-status.yaml with only the unit's entries changed).
	Contents map[string][]byte
	// Changed, when set, is the work tree's changes as listed for this
	// commit (Paths are among them): Commit need not list them again.
	Changed Snapshot
	// Subject and Body, when set, replace the commit message's first line
	// and its text before the trailers.
	Subject, Body string
}

// Committer records a story's work in version control.
type Committer interface {
	// Find returns the commit an earlier attempt of this run already made for
	// the story, so a resumed run never commits a story twice.
	Find(ctx context.Context, req CommitRequest) (sha string, found bool, err error)
	// Commit commits the request's paths (never story-automator's state) as
	// the story's one commit and returns its id.
	Commit(ctx context.Context, req CommitRequest) (sha string, err error)
}

// Clock is the time source of a run: retry backoff sleeps on it.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, returning ctx's error in that case.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
type SystemClock struct{}

var _ Clock = SystemClock{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits on a timer or ctx.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Repo is the project's version control as a run needs it.
type Repo interface {
	Committer
	// Prepare checks the repository and keeps story-automator's state out of it.
	Prepare(ctx context.Context) error
	// Snapshot fingerprints the project's uncommitted changes (story-automator's state left out).
	Snapshot(ctx context.Context) (Snapshot, error)
	// CommittedFile returns a project file as last committed; ok is false
	// when it was never committed.
	CommittedFile(ctx context.Context, path string) (data []byte, ok bool, err error)
	// Repair mends what a killed run left in the repository; Run calls it
	// holding the run lock.
	Repair(ctx context.Context) error
	// SyncIndex makes the index follow HEAD on the paths of commit sha: a
	// run that dies in the middle of a commit can leave it behind.
	SyncIndex(ctx context.Context, sha string) error
}

// GitGuard is a repository whose files that make git run code (its config
// and hooks) the run sums around each agent attempt: a child that changed
// them escalates its step before the run's own, unconfined git runs them.
type GitGuard interface {
	// GitFingerprint sums those files ("" = nothing to check).
	GitFingerprint() (string, error)
}

// HookKeeper is a repository whose own git commands can run a copy of its
// hooks taken at the run's start (Prepare) instead of the hooks as they
// are, which a child may have rewritten: on for a confined run.
type HookKeeper interface {
	KeepHooks(on bool)
}

// Snapshot maps every changed or untracked path of the project (relative to
// the project root, slash-separated) to a fingerprint of its file: two
// snapshots differ on a path exactly when the file was written, created or
// removed in between.
type Snapshot map[string]string

// Paths returns the snapshot's paths, sorted.
func (s Snapshot) Paths() []string {
	out := make([]string, 0, len(s))
	for p := range s {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Changed lists the paths whose fingerprint differs between two snapshots
// (a path missing from one has the fingerprint "").
func Changed(before, after Snapshot) []string {
	var out []string
	for p, f := range after {
		if before[p] != f {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Worktrees gives each story of a run its own working tree on a branch of
// the run (--isolate worktree), and lands a story's commit on the user's
// branch.
type Worktrees interface {
	// Enter makes the story's worktree from the user's branch as it is now,
	// or reuses the one it has, and returns the project's folder in it and
	// the worktree's branch.
	Enter(ctx context.Context, story string) (dir, branch string, err error)
	// Land commits the story's work in dir (the project's folder in its
	// worktree) as req's one commit and lands it on the user's branch,
	// returning the branch's new tip. A commit that does not apply is a
	// *Blocker with CodeMergeConflict; the worktree is then kept.
	Land(ctx context.Context, dir string, req CommitRequest) (sha string, err error)
	// Remove deletes the story's worktree and its branch.
	Remove(ctx context.Context, story string) error
}
