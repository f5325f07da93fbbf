package tmuxsteps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/tmux/child"
)

// Remote runs a story's step attempts on an ssh host, each in the story's
// clone there (a worktree of the project's repository under the host's
// work directory): the work of the story's worktree here goes there first,
// the host's own story-automator spawns the child in the host's tmux (one
// -L socket per run) and waits for it with its own monitor-session, which
// verifies there; the work comes back into the story's worktree here, as
// uncommitted changes, when the attempt ends. The story then lands from
// here exactly as a local one does. Every exchange rides the host's one
// ssh connection.
type Remote struct {
	// Local renders the step's prompt and holds the monitor's settings.
	Local *Runner
	Host  *hosts.Host
	// Project names the project's repository on the host (a slug and a hash).
	Project string
	// Exclude are the paths the repository there never commits
	// (story-automator's state), relative to the project's folder.
	Exclude []string
	// LostAfter is how long the host may stay unreachable before the
	// attempt ends with orchestrator.ErrHostLost (0 = 2 minutes).
	LostAfter time.Duration
	// WaitEach bounds one monitor-session call on the host (0 = 60s): a
	// dropped connection costs at most that wait, never the child.
	WaitEach time.Duration
	// Version is this machine's story-automator version, which the host's
	// must report ("" = not checked).
	Version string
	// Prefix is the project's folder in its repository ("" at the top, else
	// "sub/dir/"), the same in a story's clone there.
	Prefix string

	// ReapEvery is how often a lost host is tried again to end the children
	// left there (0 = 15s).
	ReapEvery time.Duration

	mu      sync.Mutex
	ready   bool
	stories map[string]string // story → the project's folder in its clone there
	// lost are the children left here since the host was lost; reaping
	// while a goroutine tries to end them.
	lost    []lostChild
	reaping bool
	reapMu  sync.Mutex
}

// NewRemote is the step runner of one ssh host, beside local.
func NewRemote(local *Runner, h *hosts.Host, project string, exclude []string) *Remote {
	return &Remote{Local: local, Host: h, Project: project, Exclude: exclude, stories: map[string]string{}}
}

// roundTripsNote names the exchanges an attempt cost in its usage note.
const roundTripsNote = "ssh round trips"

// repo is the project's repository on the host.
func (r *Remote) repo() string { return path.Join(r.Host.Dir, "repos", r.Project+".git") }

// worktree is a story's clone on the host.
func (r *Remote) worktree(run, story string) string {
	return path.Join(r.Host.Dir, "worktrees", r.Project, run, story)
}

func branchOf(run, story string) string { return "story-automator/" + run + "/" + story }

// socket is the run's tmux server on the host.
func socket(run string) string { return "sa-" + strings.TrimPrefix(run, "run-") }

// RunStep runs one attempt on the host and brings its work back into
// req.WorkDir. A host that stays unreachable for LostAfter ends it with
// orchestrator.ErrHostLost: the child may still run there, but nothing more
// is taken from it.
func (r *Remote) RunStep(ctx context.Context, req orchestrator.StepRequest) (orchestrator.StepResult, error) {
	if req.WorkDir == "" {
		return orchestrator.StepResult{}, fmt.Errorf("%w: a story on host %s needs its own worktree (--isolate worktree)", orchestrator.ErrConfig, r.Host.Name)
	}
	before := r.Host.Stats().RoundTrips()
	key, err := stepKey(req)
	if err != nil {
		return orchestrator.StepResult{}, err
	}
	proj, err := r.Local.projectOf(req)
	if err != nil {
		return orchestrator.StepResult{}, err
	}
	prompt, err := r.Local.prompt(proj, req, key)
	if err != nil {
		return orchestrator.StepResult{}, err
	}
	top, prefix, err := gitvcs.TopOf(ctx, req.WorkDir)
	if err != nil {
		return orchestrator.StepResult{}, err
	}
	wt := r.worktree(req.RunID, req.Story)
	prompt = strings.ReplaceAll(prompt, top, wt)
	sess, res, err := r.child(ctx, req, wt, prefix, prompt, key.String())
	if err != nil {
		if errors.Is(err, orchestrator.ErrHostLost) && sess.Session != "" {
			// It may run on there, spending: ended when the host answers.
			r.abandon(req.RunID, path.Join(wt, prefix), sess.Session)
		}
		return orchestrator.StepResult{Session: sess.Session}, err
	}
	repo := gitvcs.HostRepo{Host: r.Host, Path: r.repo()}
	if err := r.reach(ctx, func() error {
		_, err := repo.Mirror(ctx, req.WorkDir, "refs/heads/"+branchOf(req.RunID, req.Story))
		return err
	}); err != nil {
		return orchestrator.StepResult{Session: sess.Session}, err
	}
	out := orchestrator.StepResult{Session: sess.Session, OutputFile: r.Host.Name + ":" + res.OutputFile,
		FinalState: string(res.FinalState), Reason: res.Reason, Verifier: res.Verifier.Name, Detail: res.Verifier.Detail,
		AgentTime: time.Duration(res.ElapsedSeconds * float64(time.Second)), Blocker: blockerOf(req.Agent, res.Result),
		Usage: res.Usage.Usage, Model: res.Usage.Model, UsageNote: res.Usage.UsageNote}
	trips := fmt.Sprintf("on host %s, %d %s", r.Host.Name, r.Host.Stats().RoundTrips()-before, roundTripsNote)
	if out.Detail == "" {
		out.Detail = trips
	} else {
		out.Detail += " (" + trips + ")"
	}
	return out, nil
}

// child waits for the attempt's child on the host until it is final: the
// one a stopped orchestrator left there (req.Adopt) while it is still
// known there, else a new one.
func (r *Remote) child(ctx context.Context, req orchestrator.StepRequest, wt, prefix, prompt, key string) (spawned, waited, error) {
	pdir := path.Join(wt, prefix)
	if req.Adopt != "" {
		if err := r.reach(ctx, func() error { return r.prepare(ctx, req.RunID, prefix) }); err != nil {
			return spawned{}, waited{}, err
		}
		r.mu.Lock()
		r.stories[req.Story] = pdir
		r.mu.Unlock()
		res, err := r.wait(ctx, req, pdir, wt, req.Adopt, key)
		if err != nil || res.FinalState != monitor.NotFound {
			if req.Started != nil && err == nil {
				req.Started(req.Adopt, r.Host.Name+":"+res.OutputFile)
			}
			return spawned{Session: req.Adopt, OutputFile: res.OutputFile}, res, err
		}
	}
	sess, err := r.start(ctx, req, wt, pdir, prefix, prompt)
	if err != nil {
		return sess, waited{}, err
	}
	if req.Started != nil {
		req.Started(sess.Session, r.Host.Name+":"+sess.OutputFile)
	}
	res, err := r.wait(ctx, req, pdir, wt, sess.Session, key)
	return sess, res, err
}

// spawned is what the host's `session spawn` printed.
type spawned struct {
	Session    string `json:"session"`
	OutputFile string `json:"outputFile"`
}

// start sends the story's work to the host (its worktree's files as a
// commit), makes or resets the story's clone there to it and spawns the
// child: two round trips (three the first time a run uses the host). A
// child an earlier attempt left in the clone (a killed or lost run) is
// ended first: one attempt at a time edits a story's clone.
func (r *Remote) start(ctx context.Context, req orchestrator.StepRequest, wt, pdir, prefix, prompt string) (spawned, error) {
	var sp spawned
	if err := r.reach(ctx, func() error { return r.prepare(ctx, req.RunID, prefix) }); err != nil {
		return sp, err
	}
	sha, err := gitvcs.WorkCommit(ctx, req.WorkDir)
	if err != nil {
		return sp, err
	}
	base := "refs/story-automator/base/" + req.RunID + "/" + req.Story
	repo := gitvcs.HostRepo{Host: r.Host, Path: r.repo()}
	if err := r.reach(ctx, func() error { return repo.Push(ctx, req.WorkDir, sha, base) }); err != nil {
		return sp, err
	}
	r.mu.Lock()
	r.stories[req.Story] = pdir
	r.mu.Unlock()
	spawn := r.command(req.RunID, pdir, "session", "spawn", "--step", req.Step, "--story", req.Story, "--epic", req.Epic,
		"--cycle", strconv.Itoa(req.Cycle), "--agent", req.Agent, "--prompt-file", "-")
	if m := r.Local.modelOf(req); m != "" {
		spawn += " --model " + hosts.Quote(m)
	}
	if r.Local.TrustProject {
		spawn += " --trust-project"
	}
	if r.Local.Unconfined {
		spawn += " --sandbox off"
	}
	script := fmt.Sprintf(`set -e
R=%s W=%s B=%s S=%s
if [ -e "$W/.git" ]; then
  %s </dev/null >/dev/null 2>&1 || true
  git -C "$W" reset -q --hard "$S" </dev/null
  git -C "$W" clean -qfd </dev/null
else
  mkdir -p "$(dirname "$W")"
  git -C "$R" worktree prune </dev/null
  git -C "$R" worktree add -q -f -B "$B" "$W" "$S" </dev/null
fi
env %s %s`, hosts.Quote(r.repo()), hosts.Quote(wt), hosts.Quote(branchOf(req.RunID, req.Story)), sha,
		r.command(req.RunID, pdir, "session", "kill-all", "--project-only"), r.childEnv(req), spawn)
	var res hosts.Result
	err = r.reach(ctx, func() error {
		var err error
		res, err = r.Host.Script(ctx, script, strings.NewReader(prompt))
		return err
	})
	if err != nil {
		return sp, fmt.Errorf("spawn %s session on %s: %w", req.Step, r.Host.Name, err)
	}
	if err := json.Unmarshal(res.Stdout, &sp); err != nil || sp.Session == "" {
		return sp, fmt.Errorf("spawn %s session on %s: unexpected reply %q", req.Step, r.Host.Name, res.Stdout)
	}
	return sp, nil
}

// command is a story-automator command line on the host, in the project's
// folder of a story's clone and the run's tmux server there.
func (r *Remote) command(run, pdir string, args ...string) string {
	return hosts.Line(append([]string{r.Host.Program(), "--project-root", pdir, "--tmux-socket", socket(run)}, args...)...)
}

// childEnv is what the child learns about its attempt, as env arguments.
func (r *Remote) childEnv(req orchestrator.StepRequest) string {
	vars := []string{child.EnvAttempt + "=" + strconv.Itoa(req.Attempt), child.EnvCycle + "=" + strconv.Itoa(req.Cycle),
		child.EnvRole + "=" + req.Role, child.EnvRunID + "=" + req.RunID}
	prof, _ := agent.LookupProfile(req.Agent)
	for _, k := range slices.Sorted(maps.Keys(prof.RunEnv)) {
		vars = append(vars, k+"="+prof.RunEnv[k])
	}
	// The agent acts the same on every host: the settings its profile
	// names go along.
	for _, kv := range r.Local.Environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(prof.HostEnv, k) {
			vars = append(vars, kv)
		}
	}
	for i, v := range vars {
		vars[i] = hosts.Quote(v)
	}
	return strings.Join(vars, " ")
}
