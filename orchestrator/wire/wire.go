// Package wire builds a run's real adapters (tmux steps, git, the BMAD
// files) around the orchestrator's run loop.
package wire

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/workflows"
)

// Process is what a run takes from the process that starts it.
type Process struct {
	Getenv  func(string) string
	Environ []string
	// Exe finds this binary: the child sessions' runner and hooks run it.
	Exe  func() (string, error)
	Tmux *tmux.Client
	// SessionDir is the absolute directory of the project's session files.
	SessionDir string
	Now        func() time.Time
	Log        zerolog.Logger
	// Version is this binary's version: a host that runs stories must run the same.
	Version string
}

// Build opens the project (its BMAD layout and workflow policy), checks tmux
// unless the run is a dry run, and builds the run's real adapters: the BMAD
// files (bmad.Files), a child session in tmux per step (tmuxsteps.Runner),
// git and its worktrees (gitvcs), the system clock. The caller
// adds its Reporter and calls Run. Failures are *coded.Error with the
// project's or tmux's code.
func Build(ctx context.Context, o orchestrator.Options, p Process) (orchestrator.Options, orchestrator.Deps, error) {
	proj, err := workflows.Open(o.ProjectRoot)
	if err != nil {
		return o, orchestrator.Deps{}, coded.Fail(workflows.Code(err), "%v", err)
	}
	wpol, err := workflows.LoadPolicy(o.ProjectRoot)
	if err != nil {
		return o, orchestrator.Deps{}, coded.Fail(workflows.Code(err), "%v", err)
	}
	choice, err := workflows.DetectPipeline(o.ProjectRoot, wpol.Pipeline)
	if err != nil {
		return o, orchestrator.Deps{}, coded.Fail(workflows.Code(err), "%v", err)
	}
	for _, w := range choice.Warnings {
		p.Log.Warn().Msg(w)
	}
	o.Getenv = p.Getenv
	folder, err := StoriesFolder(o, proj)
	if err != nil {
		return o, orchestrator.Deps{}, err
	}
	if folder != nil {
		if o, err = storiesMode(o, &choice, folder, p); err != nil {
			return o, orchestrator.Deps{}, err
		}
	}
	exe, err := p.Exe()
	if err != nil {
		return o, orchestrator.Deps{}, coded.Fail("run_failed", "cannot find this binary: %v", err)
	}
	o.Pid, o.Getenv, o.Policy = os.Getpid(), p.Getenv, orchestrator.PolicyFrom(wpol)
	if !o.DryRun {
		if err := p.Tmux.CheckVersion(ctx); err != nil {
			return o, orchestrator.Deps{}, coded.Fail(tmux.Code(err), "%v", err)
		}
	}
	// Model and the monitor's rechecks come from the run's configuration (Configure).
	steps := &tmuxsteps.Runner{Tmux: p.Tmux, Exe: exe, Environ: p.Environ, Layout: proj, Policy: wpol,
		StateDir: p.SessionDir, Monitor: monitor.DefaultOptions(), Now: p.Now, TrustProject: o.TrustProject}
	repo := &gitvcs.Git{Root: o.ProjectRoot, StatePaths: StatePaths(o.ProjectRoot, p.Getenv, p.SessionDir),
		Planted: agent.SandboxPlants()}
	project := bmad.Files{P: proj}
	var backlog orchestrator.Backlog = project
	if folder != nil {
		backlog = *folder
	}
	if steps.Remotes, err = Remotes(ctx, o, wpol, steps, p, repo.StatePaths); err != nil {
		return o, orchestrator.Deps{}, err
	}
	d := orchestrator.Deps{Backlog: backlog, Steps: steps, Repo: repo, Worktrees: hostWorktrees(Worktrees(repo, project), steps.Remotes),
		Clock: orchestrator.SystemClock{}, Log: p.Log,
		Pipeline: bmad.For(choice, o.ProjectRoot, func(run, dir string) bmad.StoryGit { return repo.StoryTree(run, dir) }, folder)}
	if choice.Pipeline == workflows.PipelineBuildAuto {
		// BMAD 6.12's retrospective gives a verdict that gates the next epic.
		d.Retro = bmad.Retro{Files: project, Now: p.Now}
	}
	return o, d, nil
}

// hostWorktrees adds to a run's worktrees the removal of a story's clones on the hosts.
func hostWorktrees(local func(run string) orchestrator.Worktrees, remotes map[string]*tmuxsteps.Remote) func(run string) orchestrator.Worktrees {
	if len(remotes) == 0 {
		return local
	}
	return func(run string) orchestrator.Worktrees {
		return tmuxsteps.HostWorktrees{Worktrees: local(run), Run: run, Remotes: remotes}
	}
}

// Worktrees makes a run's story worktrees in repo, which land a story's
// done status in project's sprint-status.yaml without merging its text.
func Worktrees(repo *gitvcs.Git, project bmad.Files) func(run string) orchestrator.Worktrees {
	return func(run string) orchestrator.Worktrees {
		return repo.Worktrees(run, project.StatusFile(), func(dir, story string) error {
			p, err := workflows.Open(dir)
			if err != nil {
				return err
			}
			return bmad.Files{P: p}.MarkStoryDone(story)
		})
	}
}

// StatePaths are the files story-automator writes inside the project,
// relative to its root: never committed, listed in .git/info/exclude. The
// rest of .story-automator/ (workflow.yaml, prompts/) is the user's and stays
// visible to git.
func StatePaths(root string, getenv func(string) string, sessionDir string) []string {
	dir := orchestrator.StateDirName + "/"
	// sprint-status.lock and deferred-work.lock are the locks workflows
	// takes around sprint-status.yaml and deferred-work.md edits.
	paths := []string{dir + "runs/", dir + "run.lock", dir + "sprint-status.lock", dir + "deferred-work.lock"}
	store := marker.NewStore(root, getenv)
	// The marker's temp files (".<marker>.tmp-<digits>") too: a kill mid-write leaves one until the next run sweeps it.
	markerTemps := filepath.Join(store.Dir(), "."+filepath.Base(store.Path)+".tmp-*")
	for _, p := range []string{store.Path, store.LockPath(), markerTemps, store.HistoryPath(), sessionDir + "/"} {
		rel, err := filepath.Rel(root, strings.TrimSuffix(p, "/"))
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		if strings.HasSuffix(p, "/") {
			rel += "/"
		}
		paths = append(paths, filepath.ToSlash(rel))
	}
	return paths
}

// KeepOutOfGit lists in the project's .git/info/exclude, as a run's start
// does, its state paths and the names an agent's sandbox may plant: for a
// child started on its own (session spawn), whose agent may run `git add
// -A`. Outside a git work tree there is nothing to do.
func KeepOutOfGit(ctx context.Context, root string, getenv func(string) string, sessionDir string) error {
	repo := &gitvcs.Git{Root: root, StatePaths: StatePaths(root, getenv, sessionDir), Planted: agent.SandboxPlants()}
	if err := repo.Prepare(ctx); err != nil && !errors.Is(err, orchestrator.ErrNotGitRepo) {
		return err
	}
	return nil
}
