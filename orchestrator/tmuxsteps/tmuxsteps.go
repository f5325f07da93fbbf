// Package tmuxsteps runs a run's step attempts as child agent sessions in tmux,
// each watched to its final state by the monitor and its step's verifier.
package tmuxsteps

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/verify"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/spend"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

// Runner runs each step attempt as a child agent session in tmux and
// waits for it with the monitor, verified by the step's workflow verifier.
type Runner struct {
	Tmux     *tmux.Client
	Exe      string
	Environ  []string
	Layout   *workflows.Layout
	Policy   *workflows.Policy
	StateDir string
	Monitor  monitor.Options
	Model    string
	Now      func() time.Time
	// CloseWait bounds the wait for a closed session's processes to exit
	// before they are killed (0 = 5s).
	CloseWait time.Duration
	// TrustProject: the user asked (run --trust-project) that each child's
	// CLI trust the project folder (child.Request.TrustProject).
	TrustProject bool
	// Remotes run the attempts whose StepRequest.Host names them (see Remote).
	Remotes map[string]*Remote
	// Unconfined runs children without their CLI's sandbox (--sandbox
	// off); Network are the hosts a confined child's tools may reach,
	// ReadDeny the paths it may not read besides the user's credentials.
	// All come from the run's configuration (Configure).
	Unconfined bool
	Network    []string
	ReadDeny   []string
}

// The run loop finds the optional capabilities by type assertion; these
// make a renamed method a compile error instead of a capability switched off.
var (
	_ orchestrator.StepRunner  = (*Runner)(nil)
	_ orchestrator.UsageReader = (*Runner)(nil)
	_ orchestrator.TempSweeper = (*Runner)(nil)
)

// RunStep spawns the step's session, waits for its final state and then
// kills the session (its output stays in the output file). When ctx ends the
// session is killed at once: a paused run leaves no agent editing the project.
func (t *Runner) RunStep(ctx context.Context, req orchestrator.StepRequest) (orchestrator.StepResult, error) {
	if r := t.Remotes[req.Host]; r != nil {
		return r.RunStep(ctx, req)
	}
	key, err := stepKey(req)
	if err != nil && req.Prompt == "" {
		// A pipeline's prompt needs no key of the board: its step's
		// command verifiers read none (a stories-mode id such as "auth").
		return orchestrator.StepResult{}, err
	}
	proj, err := t.projectOf(req)
	if err != nil {
		return orchestrator.StepResult{}, err
	}
	var check workflows.Check
	if req.Prompt != "" {
		// The pipeline reads the step's outcome from the files.
		check, err = proj.ConfinedCommandVerifier(req.Step, key, t.Policy, t.commandSandbox())
	} else {
		check, err = proj.ConfinedVerifier(req.Step, key, t.Policy, t.commandSandbox())
	}
	if errors.Is(err, workflows.ErrContract) {
		return orchestrator.StepResult{FinalState: orchestrator.FinalIncomplete, Reason: monitor.ReasonContract, Detail: err.Error()}, nil
	}
	if err != nil {
		return orchestrator.StepResult{}, err
	}
	prompt := req.Prompt
	if prompt == "" {
		if prompt, err = t.prompt(proj, req, key); err != nil {
			return orchestrator.StepResult{}, err
		}
	}
	sp := &child.Spawner{Tmux: t.Tmux, Exe: t.Exe, Environ: t.childEnviron(req), Now: t.Now}
	story := req.Story
	sess, err := sp.Spawn(ctx, child.Request{ProjectRoot: t.Layout.Root, StateDir: t.StateDir, Epic: req.Epic,
		Story: story, Step: req.Step, Cycle: req.Cycle, Agent: req.Agent, Model: t.modelOf(req), Prompt: prompt,
		TrustProject: t.TrustProject, WorkDir: req.WorkDir, Unconfined: t.Unconfined, Network: t.Network, ReadDeny: t.ReadDeny,
		Env: t.envPolicy()})
	if err != nil {
		return orchestrator.StepResult{}, fmt.Errorf("spawn %s session: %w", req.Step, err)
	}
	if req.Started != nil {
		req.Started(sess.Name, sess.OutputFile)
	}
	opt := t.Monitor
	if req.Timeout > 0 {
		opt.Timeout = req.Timeout
	}
	res := monitor.Watch(ctx, sess.Name, check, opt, monitor.Deps{Tmux: t.Tmux, StateDir: t.StateDir, Now: t.Now})
	t.settleRecord(ctx, sess.Name)
	_ = t.CloseSession(context.WithoutCancel(ctx), sess.Name)
	// The agent is gone: its record of the session is whole.
	out := t.SessionUsage(req.Agent, sess.Name, req.WorkDir)
	out.Session, out.OutputFile = sess.Name, sess.OutputFile
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	out.FinalState, out.Reason, out.Verifier, out.Detail = string(res.FinalState), res.Reason, res.Verifier.Name, res.Verifier.Detail
	out.AgentTime, out.Blocker = t.agentTime(sess.Name), blockerOf(req.Agent, res)
	out.ResetsAt = resetsAt(res)
	return out, nil
}

// resetsAt is when a limited attempt's limit lifts (zero when its CLI did
// not say).
func resetsAt(res monitor.Result) time.Time {
	if res.FinalState != monitor.Limited || res.ResetsAt == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, res.ResetsAt)
	if err != nil {
		return time.Time{}
	}
	return t
}

// modelOf is the request's model, else the run's.
func (t *Runner) modelOf(req orchestrator.StepRequest) string {
	if req.Model != "" {
		return req.Model
	}
	return t.Model
}

// SessionUsage reads what a child session spent from its agent's own
// record, through the reader its profile names. A usage that cannot be read
// is nil with the reason; it never fails the step. dir is the folder the
// agent worked in ("" = the project's root): Codex and Gemini CLI file their
// records by it, and a story's worktree is a folder of its own.
func (t *Runner) SessionUsage(agentName, name, dir string) orchestrator.StepResult {
	prof, ok := agent.LookupProfile(agentName)
	if !ok || prof.Usage == "" {
		return orchestrator.StepResult{UsageNote: fmt.Sprintf("the %s agent reports no usage the tool can read", agentName)}
	}
	st, err := sessionstate.Read(t.StateDir, name)
	if err != nil {
		return orchestrator.StepResult{UsageNote: "no session state: " + err.Error()}
	}
	since, _ := marker.ParseTime(st.CreatedAt)
	env := envMap(t.Environ)
	if dir == "" {
		dir = t.Layout.Root
	}
	getenv := func(k string) string { return env[k] }
	r, err := spend.Read(prof.Usage, spend.Session{Transcript: st.Transcript, StateDir: prof.StateHome(getenv),
		Dir: dir, Since: since})
	if err != nil {
		return orchestrator.StepResult{UsageNote: fmt.Sprintf("usage not read (%s): %v", prof.Usage, err)}
	}
	return orchestrator.StepResult{Usage: &r.Usage, Model: r.Model}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Codes of the causes a monitored attempt ends for that no retry changes.
const (
	CodeAgentDialog = "agent_dialog"
	// exitNotFound is the exit status of an agent whose program is missing.
	exitNotFound = "exit_code_127"
)

// blockerOf returns what stops a step for good in a monitor's result: the
// agent waits at a dialog its user must settle, or its CLI is gone. A
// dialog about the story's folder or one the table does not know parks
// the story (the next story's folder may be trusted, its prompt not asked);
// one about the agent itself (its login, its permissions) would meet every
// story and pauses the run.
func blockerOf(agentName string, res monitor.Result) *orchestrator.Blocker {
	switch res.Reason {
	case monitor.ReasonDialog:
		return &orchestrator.Blocker{Code: CodeAgentDialog, Action: res.Action,
			Park: res.Dialog == agent.DialogTrustFolder || res.Dialog == agent.DialogUnknownPrompt,
			Err:  fmt.Errorf("the %s agent waits at its %s dialog", agentName, res.Dialog)}
	case exitNotFound:
		action := "install the agent's CLI"
		if p, ok := agent.LookupProfile(agentName); ok && p.Install != "" {
			action = "install it: " + p.Install
		}
		return &orchestrator.Blocker{Code: child.CodeAgentNotFound, Action: action,
			Err: fmt.Errorf("the %s agent could not be started (exit 127: its program is missing)", agentName)}
	}
	return nil
}

// Configure takes the run's recorded model and monitor settings.
func (t *Runner) Configure(cfg orchestrator.RunConfig) error {
	if cfg.Model != "" {
		t.Model = cfg.Model
	}
	if cfg.CompletionRechecks > 0 {
		t.Monitor.Rechecks = cfg.CompletionRechecks
	}
	if d, ok := cfg.RecheckGrace.Get(); ok {
		t.Monitor.RecheckGrace = d
	}
	t.Unconfined, t.Network, t.ReadDeny = !cfg.Confined(), cfg.SandboxNetwork, cfg.SandboxReadDeny
	return nil
}

// StepVerifier returns the step's verifier, to run once with no session.
// A step whose verifiers are all session_exit gets one that never passes:
// without a session that completed, they prove nothing. A request
// FromFiles gets the step's command verifiers alone.
func (t *Runner) StepVerifier(req orchestrator.StepRequest) (verify.Verifier, error) {
	key, err := stepKey(req)
	if err != nil {
		return nil, err
	}
	proj, err := t.projectOf(req)
	if err != nil {
		return nil, err
	}
	if req.FromFiles {
		// The pipeline reads the rest from the files; with no command
		// verifier this is session_exit, which has nothing to run.
		return proj.ConfinedCommandVerifier(req.Step, key, t.Policy, t.commandSandbox())
	}
	check, err := proj.ConfinedVerifier(req.Step, key, t.Policy, t.commandSandbox())
	if err != nil {
		return nil, err
	}
	only, err := t.onlySessionExit(req.Step)
	if err != nil {
		return nil, err
	}
	if only {
		return needsSession{name: check.Name()}, nil
	}
	return check, nil
}

// needsSession is the verifier of a step, checked with no session, whose
// verifiers all need one.
type needsSession struct{ name string }

func (n needsSession) Name() string { return n.name }

func (needsSession) Verify(context.Context) verify.Verdict {
	return verify.Verdict{Detail: "session_exit needs a session that completed"}
}

// onlySessionExit reports whether every verifier of the step is session_exit.
func (t *Runner) onlySessionExit(step string) (bool, error) {
	pol := t.Policy
	if pol == nil {
		var err error
		if pol, err = workflows.LoadPolicy(t.Layout.Root); err != nil {
			return false, err
		}
	}
	s, err := pol.Step(step)
	if err != nil {
		return false, err
	}
	for _, v := range s.Verifiers {
		if v != workflows.VerifySessionExit {
			return false, nil
		}
	}
	return true, nil
}

// CloseSession kills a child session (one already gone is not an error)
// and waits until its runner and agent processes are gone, so no agent of a
// closed session still edits the project while its step runs again. A
// process still alive after CloseWait (default 5s) is killed with SIGKILL.
// The recorded pids are only trusted while tmux still had the session or the
// process's environment names the session: after a reboot, or days later, a
// pid may belong to an unrelated process.
func (t *Runner) CloseSession(ctx context.Context, name string) error {
	kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := t.Tmux.KillSession(kctx, name)
	found := err == nil
	if errors.Is(err, tmux.ErrNoSession) || errors.Is(err, tmux.ErrNoServer) {
		err = nil
	}
	st, rerr := sessionstate.Read(t.StateDir, name)
	if rerr != nil {
		return err // no state file: nothing was started
	}
	var pids []int
	for _, pid := range []int{st.AgentPid, st.PanePid} {
		if pid > 0 && (found || inSession(pid, name)) {
			pids = append(pids, pid)
		}
	}
	wait := t.CloseWait
	if wait <= 0 {
		wait = 5 * time.Second
	}
	if !waitGone(ctx, pids, wait) {
		for _, pid := range pids {
			if proc.Alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if !waitGone(ctx, pids, time.Second) {
			err = errors.Join(err, fmt.Errorf("session %s: processes %v outlived SIGKILL", name, pids))
		}
	}
	return err
}

// inSession reports whether the process's environment names the session
// (readable for our own processes); an unreadable one does not.
func inSession(pid int, name string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	want := sessionstate.EnvSession + "=" + name
	for _, kv := range strings.Split(string(data), "\x00") {
		if kv == want {
			return true
		}
	}
	return false
}

// stepKey is the workflows key of a request: the story, or for retro the
// epic; a sweep or action unit names no story (its pipeline reads its
// outcome from the files).
func stepKey(req orchestrator.StepRequest) (workflows.StoryKey, error) {
	switch {
	case req.Step == orchestrator.StepRetro:
		return workflows.StoryKey{Epic: req.Epic}, nil
	case req.Kind == orchestrator.KindSweep || req.Kind == orchestrator.KindAction:
		return workflows.StoryKey{}, nil
	}
	return workflows.ParseStoryKey(req.Story)
}

// prompt renders the step's prompt (the request's own when it has one); a
// review after the first gets the open notes.
func (t *Runner) prompt(proj *workflows.Layout, req orchestrator.StepRequest, key workflows.StoryKey) (string, error) {
	if req.Prompt != "" {
		return req.Prompt, nil
	}
	vars := workflows.PromptVars{Cycle: req.Cycle}
	if req.Step == orchestrator.StepReview && req.Cycle > 1 {
		vars.ReviewNotes, _ = proj.ReviewNotes(key)
	}
	return proj.Prompt(req.Step, key, t.Policy, vars)
}

// projectOf is the project a step works on: the one in the story's git
// worktree when it has one (its prompt names those paths and its verifiers
// look there), else the run's.
func (t *Runner) projectOf(req orchestrator.StepRequest) (*workflows.Layout, error) {
	if req.WorkDir == "" {
		return t.Layout, nil
	}
	return workflows.Open(req.WorkDir)
}

// envPolicy is which variables beyond the allow-list a child gets:
// workflow.yaml's env.pass, never a variable its notify names.
func (t *Runner) envPolicy() child.EnvPolicy {
	if t.Policy == nil {
		return child.EnvPolicy{}
	}
	return child.EnvPolicy{Pass: t.Policy.Env.Pass, Deny: t.Policy.Notify.Vars()}
}

// childEnviron is the orchestrator's environment plus what the child should
// know about its attempt, and its agent's run defaults (Profile.RunEnv) for
// what the environment does not set.
func (t *Runner) childEnviron(req orchestrator.StepRequest) []string {
	env := append([]string(nil), t.Environ...)
	env = append(env, child.EnvAttempt+"="+strconv.Itoa(req.Attempt), child.EnvCycle+"="+strconv.Itoa(req.Cycle),
		child.EnvRole+"="+req.Role, child.EnvRunID+"="+req.RunID)
	prof, _ := agent.LookupProfile(req.Agent)
	for _, k := range slices.Sorted(maps.Keys(prof.RunEnv)) {
		if !hasVar(t.Environ, k) {
			env = append(env, k+"="+prof.RunEnv[k])
		}
	}
	return env
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == name && v != "" {
			return true
		}
	}
	return false
}

// runsCommand reports whether an enabled step of the run's policy has the
// command verifier.
func (t *Runner) runsCommand() bool {
	pol := t.Policy
	if pol == nil {
		if t.Layout == nil {
			return false // no project, so no command of its to run
		}
		var err error
		if pol, err = workflows.LoadPolicy(t.Layout.Root); err != nil {
			return true // the verifier will say what is wrong; check the sandbox anyway
		}
	}
	for _, s := range pol.Steps {
		if s.Enabled && slices.Contains(s.Verifiers, workflows.VerifyCommand) {
			return true
		}
	}
	return false
}

// agentTime is how long the agent process ran, from its session state.
func (t *Runner) agentTime(name string) time.Duration {
	st, err := sessionstate.Read(t.StateDir, name)
	if err != nil {
		return 0
	}
	start, ok1 := marker.ParseTime(st.StartedAt)
	end, ok2 := marker.ParseTime(st.ExitedAt)
	if !ok1 || !ok2 || end.Before(start) {
		return 0
	}
	return end.Sub(start)
}

// commandSandbox confines the command verifier as the run's children are
// confined: off with --sandbox off, the hosts the run lets children reach
// (through this tool's proxy), the paths they may not read, the environment they start
// from (the allow-list and env.pass, no agent's own variables).
func (t *Runner) commandSandbox() *workflows.CommandSandbox {
	return &workflows.CommandSandbox{Off: t.Unconfined, Network: t.Network, Exe: t.Exe, ReadDeny: t.ReadDeny,
		Env: child.ChildEnv(t.Environ, agent.Profile{}, t.envPolicy(), nil)}
}

// CheckAgents checks each agent's CLI on the PATH its children will get,
// and, unless the run's sandbox is off, that the CLI's sandbox works here
// and so does the one the command verifier runs the project's command in;
// then that each host runs this story-automator (Remote.CheckInstalled).
func (t *Runner) CheckAgents(ctx context.Context, agents []string) error {
	for _, a := range agents {
		_, _, err := child.CheckAgent(ctx, a, t.Environ)
		if err == nil && !t.Unconfined {
			err = child.CheckSandbox(ctx, a, t.Environ)
		}
		if err != nil {
			if ae, ok := child.AsAgentError(err); ok {
				return &orchestrator.Blocker{Code: ae.Code, Action: ae.Action, Err: err}
			}
			return fmt.Errorf("%w: %v", orchestrator.ErrConfig, err)
		}
	}
	if !t.Unconfined && t.runsCommand() {
		if err := confine.Check(); err != nil {
			var ce *coded.Error
			if errors.As(err, &ce) {
				return &orchestrator.Blocker{Code: ce.Code, Action: ce.Action, Err: err}
			}
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.Remotes)) {
		if err := t.Remotes[name].CheckInstalled(ctx); err != nil {
			return err
		}
	}
	return nil
}
