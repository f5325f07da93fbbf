package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/workflows"
)

// Options configure one `run` invocation (the command line fills them).
type Options struct {
	ProjectRoot string
	// RunConfig is the configuration given: on a new run every flag,
	// defaults included; on --resume only those given again, merged over
	// the run's own (RunConfig.Merge). Epic and Stories select a new run's
	// stories; Isolate "" = a worktree per story when Parallel > 1.
	RunConfig
	Resume bool
	DryRun bool
	// TrustProject lets the agent CLIs' "trust this folder?" be answered for
	// the project folder (tmuxsteps.Runner.TrustProject).
	TrustProject bool
	// Replan is a resumed run's story sent back to planning (run --resume
	// --replan ID; a Pipeline that is a Replanner).
	Replan string
	// Pid is this long-lived process, recorded as the marker's ownerPid.
	Pid    int
	Getenv func(string) string
	Policy Policy
}

// Deps are a run's collaborators.
type Deps struct {
	Backlog Backlog
	Steps   StepRunner
	Repo    Repo
	// Worktrees, when set, makes the worktrees of a run (by its id) that
	// isolates its stories (IsolateWorktree).
	Worktrees func(run string) Worktrees
	Clock     Clock
	Report    Reporter
	Log       zerolog.Logger
	// ActionLog, when set, lets code beside the run (notifications) add
	// lines to its action log, during the run and after it.
	ActionLog *ActionLog
	// Pipeline is the project's pipeline (nil: the five steps, nothing to check).
	Pipeline Pipeline
	// Retro is the pipeline's retrospective with a verdict (nil: the
	// five-step retrospective).
	Retro Retrospective
}

// Result is what a run did.
type Result struct {
	Outcome    Outcome
	State      *State
	StatePath  string
	MarkerPath string
	DryRun     bool
	// Warnings say what the run found corrupt and moved aside.
	Warnings []string
	// Pipeline is the pipeline the run took and why (zero without Deps.Pipeline).
	Pipeline workflows.PipelineChoice
}

// Run plans or resumes a run, holds the run lock and the marker for its
// whole life, and drives it with an Engine. A run that does not end done
// returns its Result together with ErrEscalated, ErrInterrupted or
// ErrPausedByHand, its marker paused.
func Run(ctx context.Context, o Options, d Deps) (*Result, error) {
	if err := o.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	ttl, err := SessionTTL(o.Getenv)
	if err != nil {
		return nil, err
	}
	store := marker.NewStore(o.ProjectRoot, o.Getenv)
	var choice workflows.PipelineChoice
	if d.Pipeline != nil {
		// Before anything is planned, written or started.
		if err := d.Pipeline.Ready(ctx); err != nil {
			return nil, err
		}
		choice = d.Pipeline.Choice()
	}
	if o.DryRun {
		// Without the run lock nothing is moved aside: a run may be writing.
		st, path, err := loadOrPlan(store, o, d, &stateLoader{})
		if err != nil {
			return nil, err
		}
		return &Result{State: st, StatePath: path, MarkerPath: store.Path, DryRun: true, Pipeline: choice}, nil
	}
	// The exclude is written before the run lock's file exists, so a run
	// refused from here on leaves nothing git would show.
	if err := d.Repo.Prepare(ctx); err != nil {
		return nil, err
	}
	lock, err := AcquireRunLock(o.ProjectRoot)
	if err != nil {
		return nil, err
	}
	defer func() {
		lock.Release()
		d.ActionLog.detach() // after the release: a line added from now on takes the lock itself
	}()
	if err := repairProject(ctx, store, o.ProjectRoot, d); err != nil {
		return nil, err
	}
	loader := &stateLoader{moveAside: true, now: d.Clock.Now}
	st, path, pol, err := begin(ctx, store, o, d, loader)
	for _, w := range loader.warnings {
		d.Log.Warn().Msg(w)
	}
	if err != nil {
		return nil, err
	}
	d.sweepSessions(ttl, st)
	eng := &Engine{Steps: d.Steps, Backlog: d.Backlog, Git: d.Repo, Marker: store, Clock: d.Clock, Policy: pol,
		Report: d.Report, Log: d.Log, Journal: NewJournal(path), Worktrees: worktreesOf(st, d), ActionLog: d.ActionLog,
		Jitter: jitterFrom(o.Getenv), Pipeline: d.Pipeline, Retro: d.Retro}
	out, runErr := eng.Run(ctx, st)
	eng.Journal.Close()
	res := &Result{Outcome: out, State: st, StatePath: path, MarkerPath: store.Path, Warnings: loader.warnings, Pipeline: choice}
	if runErr != nil {
		settleMarker(store, st.RunID, OutcomeInterrupted, "the run failed: "+runErr.Error(), d.Clock)
		return res, runErr
	}
	settleMarker(store, st.RunID, out, pauseText(st), d.Clock)
	switch out {
	case OutcomeEscalated:
		return res, fmt.Errorf("%w: %s", ErrEscalated, st.Escalation.Reason)
	case OutcomeDoneWithParked:
		return res, fmt.Errorf("%w: %s", ErrDoneWithParked, st.PauseReason)
	case OutcomeBudgetExceeded:
		return res, fmt.Errorf("%w: %s", ErrBudgetExceeded, st.Escalation.Reason)
	case OutcomeInterrupted:
		return res, fmt.Errorf("%w: %s", ErrInterrupted, st.PauseReason)
	case OutcomePaused:
		return res, ErrPausedByHand
	}
	return res, nil
}

// repairProject mends, under the run lock, what a killed run left: its git
// files and the temps of its atomic writes.
func repairProject(ctx context.Context, store *marker.Store, root string, d Deps) error {
	if err := d.Repo.Repair(ctx); err != nil {
		return err
	}
	for _, p := range sweepRunTemps(ctx, root, store) {
		d.Log.Debug().Str("path", p).Msg("removed a temp file left by a killed write")
	}
	return nil
}

// begin plans or loads the run, settles its configuration, and takes hold
// of the project: state document saved, older runs superseded, marker claimed.
func begin(ctx context.Context, store *marker.Store, o Options, d Deps, loader *stateLoader) (*State, string, Policy, error) {
	if !o.Resume {
		if err := refuseExistingMarker(store, o.ProjectRoot); err != nil {
			return nil, "", Policy{}, err
		}
	}
	st, path, err := loadOrPlan(store, o, d, loader)
	if err != nil {
		return nil, "", Policy{}, err
	}
	if err := st.Config.check(); err != nil {
		return nil, "", Policy{}, err
	}
	if o.Resume && o.Replan != "" {
		if err := (&Engine{state: st, Pipeline: d.Pipeline, Clock: d.Clock, Log: d.Log}).replan(ctx, o.Replan); err != nil {
			return nil, "", Policy{}, err
		}
	}
	pol, err := effectivePolicy(o.Policy, st.Config)
	if err != nil {
		return nil, "", Policy{}, err
	}
	if err := d.Steps.Configure(st.Config); err != nil {
		return nil, "", Policy{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if hk, ok := d.Repo.(HookKeeper); ok {
		hk.KeepHooks(st.Config.Confined()) // before prepareRepo's Prepare copies them
	}
	// A missing or unsupported agent CLI stops the run now, with its install
	// command, not after a step's retries.
	if err := d.Steps.CheckAgents(ctx, pol.agentsUsed(st.Config)); err != nil {
		return nil, "", Policy{}, err
	}
	if err := prepareRepo(ctx, d.Repo, !o.Resume); err != nil {
		return nil, "", Policy{}, err
	}
	// The document exists before the marker names it, so a kill in between
	// never leaves a marker pointing at nothing.
	if err := SaveState(path, st); err != nil {
		return nil, "", Policy{}, err
	}
	if !o.Resume {
		if err := supersedeOld(o.ProjectRoot, st.RunID, d.Clock.Now(), loader); err != nil {
			return nil, "", Policy{}, err
		}
	}
	if err := claimMarker(ctx, store, st, o, d.Clock); err != nil {
		return nil, "", Policy{}, err
	}
	testHookMarkerClaimed()
	return st, path, pol, SaveState(path, st)
}

// agentsUsed lists every agent the run may start: the run's primary and
// fallback, and each enabled agent step's own.
func (p Policy) agentsUsed(cfg RunConfig) []string {
	seen := map[string]bool{}
	var out []string
	add := func(a string) {
		if a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	add(cfg.Agent)
	add(cfg.FallbackAgent)
	for _, name := range append(StorySteps(), StepRetro) {
		if sp := p.Step(name); sp.Enabled && sp.Action != ActionGitCommit {
			add(sp.Agent)
			add(sp.FallbackAgent)
		}
	}
	return out
}

// testHookMarkerClaimed runs right after the marker is claimed; tests use
// it to stop a run there as a kill would.
var testHookMarkerClaimed = func() {}

// loadOrPlan returns the state to work on: the resumed run's, or a new plan
// with its state document path.
func loadOrPlan(store *marker.Store, o Options, d Deps, loader *stateLoader) (*State, string, error) {
	if o.Resume {
		path, err := findResumable(store, o.ProjectRoot, loader)
		if err != nil {
			return nil, "", err
		}
		st, err := loader.load(path)
		if errors.Is(err, ErrStateCorrupt) {
			return nil, "", fmt.Errorf("%w; nothing can resume from it: drop the marker with `story-automator marker remove` and start a new run", err)
		}
		if err != nil {
			return nil, "", err
		}
		// The project may have moved since: the run lives where it was found.
		st.ProjectRoot, st.Config.StateFile, st.Config.MarkerFile = o.ProjectRoot, path, store.Path
		st.Config.Merge(o.RunConfig, o.Policy)
		return st, path, nil
	}
	id := newRunID(d.Clock)
	path := filepath.Join(RunsDir(o.ProjectRoot), id+".md")
	cfg := RunConfig{Epic: o.Epic, Stories: orAll(o.Stories), Parallel: 1, StateFile: path, MarkerFile: store.Path,
		OwnerSession: agent.AgentSessionID(o.Getenv)}
	cfg.Merge(o.RunConfig, o.Policy)
	var steps []string
	if d.Pipeline != nil {
		steps = d.Pipeline.StorySteps()
	}
	in := PlanInput{RunID: id, ProjectRoot: o.ProjectRoot, Config: cfg, Policy: o.Policy, Now: d.Clock.Now(),
		Steps: steps, RetroGates: d.Retro != nil}
	if cfg.Leftovers != nil {
		st, err := planLeftovers(context.Background(), d.Pipeline, in)
		return st, path, err
	}
	st, err := NewPlan(d.Backlog, in)
	return st, path, err
}

func orAll(s string) string {
	if strings.TrimSpace(s) == "" {
		return "all"
	}
	return s
}

func newRunID(c Clock) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return "run-" + c.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// prepareRepo checks git and, for a new run, refuses uncommitted changes:
// they would end up in the first story's commit.
func prepareRepo(ctx context.Context, r Repo, checkClean bool) error {
	if err := r.Prepare(ctx); err != nil {
		return err
	}
	if !checkClean {
		return nil
	}
	snap, err := r.Snapshot(ctx)
	if err != nil {
		return err
	}
	if dirty := snap.Paths(); len(dirty) > 0 {
		shown := dirty[:min(len(dirty), 5)]
		return fmt.Errorf("%w (%s%s): commit or stash them first, so every story's commit holds only its own work",
			ErrDirtyWorktree, strings.Join(shown, ", "), more(len(dirty)-len(shown)))
	}
	return nil
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

// refuseExistingMarker keeps a new run from replacing another run's marker.
func refuseExistingMarker(store *marker.Store, root string) error {
	m, err := store.Read()
	if errors.Is(err, marker.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read marker %s: %w", store.Path, err)
	}
	if m.Active() && m.OwnerPid > 0 && otherOwnerAlive(m, root) {
		return fmt.Errorf("%w (marker %s, orchestrator pid %d)", ErrRunActive, store.Path, m.OwnerPid)
	}
	if m.Active() && m.OwnerPid == 0 {
		return fmt.Errorf("%w (marker %s, driven by an agent session %q)", ErrRunActive, store.Path, m.OwnerSession)
	}
	if m.StateFile != "" {
		return fmt.Errorf("%w (state %s): continue it with `story-automator run --resume`, or drop it with `story-automator marker remove`",
			ErrRunPaused, m.StateFile)
	}
	return fmt.Errorf("%w (marker %s): remove it with `story-automator marker remove` first", ErrRunPaused, store.Path)
}
