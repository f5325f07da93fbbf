package tmuxsteps

import (
	"bytes"
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
	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/gitvcs"
	"github.com/story-automator/story-automator/spend"
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

	mu      sync.Mutex
	ready   bool
	stories map[string]string // story → the project's folder in its clone there
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
		spawn += " --model " + quote(m)
	}
	if r.Local.TrustProject {
		spawn += " --trust-project"
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
env %s %s`, quote(r.repo()), quote(wt), quote(branchOf(req.RunID, req.Story)), sha,
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

// prepare makes the project's repository on the host once per run: bare,
// with story-automator's state excluded from its worktrees' commits, and
// nothing left of an earlier run's stories; and checks the host's version.
func (r *Remote) prepare(ctx context.Context, run, prefix string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready {
		return nil
	}
	excl := make([]string, 0, len(r.Exclude))
	for _, p := range r.Exclude {
		excl = append(excl, quote("/"+prefix+p))
	}
	// Clones earlier runs left are dropped with their sessions: the
	// stories' worktrees here hold their work. This run's own (a resumed
	// run's) stay: a child may still work in one (StepRequest.Adopt).
	script := fmt.Sprintf(`set -e
R=%s D=%s P=%s X=%s RUN=%s
"$X" --version </dev/null 2>/dev/null | head -n 1 || true
[ -d "$R" ] || git init -q --bare "$R"
mkdir -p "$R/info"
printf '%%s\n' %s > "$R/info/exclude"
for w in "$D"/*/*; do
  [ -d "$w" ] || continue
  run=$(basename "$(dirname "$w")")
  [ "$run" = "$RUN" ] && continue
  "$X" --project-root "$w/$P" --tmux-socket "sa-${run#run-}" session kill-all --project-only </dev/null >/dev/null 2>&1 || true
  git -C "$R" worktree remove --force --force "$w" </dev/null >/dev/null 2>&1 || true
done
find "$D" -mindepth 1 -maxdepth 1 ! -name "$RUN" -exec rm -rf {} + 2>/dev/null || true
git -C "$R" worktree prune </dev/null
git -C "$R" for-each-ref --format='%%(refname)' refs/heads/story-automator refs/story-automator | while read -r ref; do
  case "$ref" in */"$RUN"/*) continue ;; esac
  git -C "$R" update-ref -d "$ref" </dev/null
done`, quote(r.repo()), quote(path.Join(r.Host.Dir, "worktrees", r.Project)), quote(prefix), quote(r.Host.Program()), quote(run),
		strings.Join(excl, " "))
	res, err := r.Host.Script(ctx, script, nil)
	if err != nil {
		return fmt.Errorf("make the project's repository on %s: %w", r.Host.Name, err)
	}
	if err := r.sameVersion(string(res.Stdout)); err != nil {
		return err
	}
	r.ready = true
	return nil
}

// Codes of a host a run cannot use (as doctor --host names them).
const (
	CodeHostNotInstalled    = "host_not_installed"
	CodeHostVersionMismatch = "host_version_mismatch"
)

// sameVersion refuses a host whose story-automator (its --version line in
// out) is missing or another version than this one: the step escalates
// with the install command.
func (r *Remote) sameVersion(out string) error {
	if r.Version == "" {
		return nil
	}
	got := hosts.VersionOf(out)
	action := "story-automator hosts install " + r.Host.Name
	switch {
	case got == "":
		return &orchestrator.Blocker{Code: CodeHostNotInstalled, Action: action,
			Err: fmt.Errorf("host %s has no story-automator in %s", r.Host.Name, r.Host.BinDir())}
	case got != r.Version:
		return &orchestrator.Blocker{Code: CodeHostVersionMismatch, Action: action,
			Err: fmt.Errorf("host %s runs story-automator %s, this machine %s", r.Host.Name, got, r.Version)}
	}
	return nil
}

// wait calls the host's monitor-session, WaitEach at a time, until the
// child reaches a final state; then, in the same call, the host kills the
// session and commits the clone's work on the story's branch (again while
// the wait of a killed orchestrator, still running there, commits too). A call the
// connection drops under is made again: the child runs on in the host's
// tmux, and a final result already reached is kept there and printed again.
func (r *Remote) wait(ctx context.Context, req orchestrator.StepRequest, pdir, wt, name, key string) (waited, error) {
	opt := r.Local.Monitor
	if req.Timeout > 0 {
		opt.Timeout = req.Timeout
	}
	each := r.WaitEach
	if each <= 0 {
		each = time.Minute
	}
	deadline := time.Now().Add(opt.Timeout)
	for {
		left := max(time.Until(deadline), time.Second)
		mon := r.command(req.RunID, pdir, "monitor-session", name, "--workflow", req.Step, "--story-key", key,
			"--timeout", left.Round(time.Second).String(), "--return-after", min(each, left).Round(time.Second).String(),
			"--completion-rechecks", strconv.Itoa(max(opt.Rechecks, 1)), "--recheck-grace", opt.RecheckGrace.String(), "--json")
		script := fmt.Sprintf(`K=%s W=%s
if [ ! -s "$K" ]; then
  %s >"$K.tmp"
  rc=$?
  case $rc in
  8) cat "$K.tmp"; exit 8 ;;
  0|3|4|5|6|7) [ -s "$K.tmp" ] || exit 10; mv "$K.tmp" "$K" ;;
  *) [ "$rc" -gt 128 ] && exit 10; cat "$K.tmp" >&2; exit 11 ;;
  esac
fi
%s >/dev/null 2>&1
cd "$W" || exit 9
n=0
until { git add -A && git -c user.name=story-automator -c user.email=story-automator@localhost commit -q --no-verify --allow-empty -m %s; } </dev/null >/dev/null 2>&1; do
  n=$((n+1)); [ "$n" -lt 20 ] || exit 9; sleep 0.5
done
cat "$K"
echo
%s 2>/dev/null || true`, quote(path.Join(path.Dir(wt), "."+path.Base(wt)+"-"+name+".json")), quote(wt), mon,
			r.command(req.RunID, pdir, "session", "kill", name), quote("story-automator: "+req.Step+" of "+req.Story),
			r.command(req.RunID, pdir, "session", "usage", name, "--agent", req.Agent))
		var res hosts.Result
		err := r.reach(ctx, func() error {
			var err error
			res, err = r.Host.Run(ctx, hosts.Request{Args: []string{"sh", "-c", script}})
			var ee *hosts.ExitError
			switch {
			case errors.As(err, &ee) && ee.Code == exitMonitorCut:
				return errMonitorCut
			case errors.As(err, &ee) && ee.Code != exitCommit && ee.Code != exitMonitorFailed:
				return nil
			}
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				r.kill(req.RunID, pdir, name)
			}
			return waited{}, err
		}
		var out waited
		dec := json.NewDecoder(bytes.NewReader(res.Stdout))
		if err := dec.Decode(&out.Result); err != nil {
			return out, fmt.Errorf("monitor %s on %s: unexpected reply %q (exit %d: %s)", name, r.Host.Name, res.Stdout, res.Exit, strings.TrimSpace(string(res.Stderr)))
		}
		if out.FinalState != monitor.Running {
			if dec.Decode(&out.Usage) != nil {
				out.Usage = hostUsage{UsageNote: "the host did not say what the attempt spent"}
			}
			return out, nil
		}
	}
}

// waited is how a child on the host ended, and what it spent there.
type waited struct {
	monitor.Result
	Usage hostUsage
}

// hostUsage is what the host's `session usage` printed.
type hostUsage struct {
	Usage     *spend.Usage `json:"usage"`
	Model     string       `json:"model"`
	UsageNote string       `json:"usageNote"`
}

// Exit statuses of the wait script: the commit failed (exitCommit), the
// host's monitor failed (exitMonitorFailed), or it was killed before it
// said anything (exitMonitorCut: the host dropped the connection's
// processes; the child runs on, so the wait is made again).
const (
	exitCommit        = 9
	exitMonitorCut    = 10
	exitMonitorFailed = 11
)

var errMonitorCut = errors.New("the host's monitor-session was cut off")

// kill ends a child on the host after the run stopped waiting for it.
func (r *Remote) kill(run, pdir, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = r.Host.Script(ctx, r.command(run, pdir, "session", "kill", name), nil)
}

// reach runs op, again while the host is unreachable, until it succeeds,
// fails otherwise, ctx ends or the host stays unreachable for LostAfter.
func (r *Remote) reach(ctx context.Context, op func() error) error {
	lost := r.LostAfter
	if lost <= 0 {
		lost = 2 * time.Minute
	}
	var since time.Time
	for {
		err := op()
		if err == nil || !(errors.Is(err, hosts.ErrUnreachable) || errors.Is(err, errMonitorCut)) || ctx.Err() != nil {
			return err
		}
		if since.IsZero() {
			since = time.Now()
		}
		if time.Since(since) >= lost {
			return fmt.Errorf("%w: %s for %s: %v", orchestrator.ErrHostLost, r.Host.Name, lost, err)
		}
		t := time.NewTimer(2 * time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// command is a story-automator command line on the host, in the project's
// folder of a story's clone and the run's tmux server there.
func (r *Remote) command(run, pdir string, args ...string) string {
	words := []string{quote(r.Host.Program()), "--project-root", quote(pdir), "--tmux-socket", quote(socket(run))}
	for _, a := range args {
		words = append(words, quote(a))
	}
	return strings.Join(words, " ")
}

// childEnv is what the child learns about its attempt, as env arguments.
func (r *Remote) childEnv(req orchestrator.StepRequest) string {
	vars := []string{child.EnvAttempt + "=" + strconv.Itoa(req.Attempt), child.EnvCycle + "=" + strconv.Itoa(req.Cycle),
		child.EnvRole + "=" + req.Role, child.EnvRunID + "=" + req.RunID}
	prof, _ := agent.LookupProfile(req.Agent)
	for _, k := range slices.Sorted(maps.Keys(prof.RunEnv)) {
		vars = append(vars, k+"="+prof.RunEnv[k])
	}
	// The simulated agent acts the same on every host: its settings go
	// along (not its files' paths, which are this machine's).
	for _, kv := range r.Local.Environ {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(simSettings, k) {
			vars = append(vars, kv)
		}
	}
	for i, v := range vars {
		vars[i] = quote(v)
	}
	return strings.Join(vars, " ")
}

// Drop removes a story's clone on the host, its branch and refs, and any
// session of it left in the run's tmux server there; the repository stays
// as the project's cache. A story the run never sent there is left alone.
func (r *Remote) Drop(ctx context.Context, run, story string) error {
	r.mu.Lock()
	pdir, ok := r.stories[story]
	delete(r.stories, story)
	r.mu.Unlock()
	if !ok {
		return nil
	}
	wt := r.worktree(run, story)
	script := fmt.Sprintf(`R=%s W=%s
%s >/dev/null 2>&1
git -C "$R" worktree remove --force --force "$W" </dev/null 2>/dev/null
rm -rf "$W" "$(dirname "$W")/.$(basename "$W")-"*.json
git -C "$R" worktree prune </dev/null
git -C "$R" branch -q -D %s </dev/null 2>/dev/null
git -C "$R" update-ref -d %s </dev/null
rmdir -p "$(dirname "$W")" 2>/dev/null
true`, quote(r.repo()), quote(wt), r.command(run, pdir, "session", "kill-all", "--project-only"),
		quote(branchOf(run, story)), quote("refs/story-automator/base/"+run+"/"+story))
	if _, err := r.Host.Script(ctx, script, nil); err != nil {
		return fmt.Errorf("remove story %s's clone on %s: %w", story, r.Host.Name, err)
	}
	return nil
}

// simSettings are the simulated agent's variables a remote child gets.
var simSettings = []string{agentsim.EnvDelay, agentsim.EnvFaults, agentsim.EnvBehaviour, agentsim.EnvExitCode, agentsim.EnvUsage}

func quote(s string) string {
	q, err := shellword.Quote(s)
	if err != nil {
		// Only a NUL cannot be quoted: no path, name or flag here holds one.
		return "''"
	}
	return q
}

// HostWorktrees are a run's story worktrees here, whose Remove also
// removes the story's clone on the hosts it ran on.
type HostWorktrees struct {
	orchestrator.Worktrees
	Run     string
	Remotes map[string]*Remote
}

// Remove drops the story's clones on the hosts (a host that does not
// answer within a minute keeps its clone: `hosts` lists what is left),
// then its worktree and branch here.
func (w HostWorktrees) Remove(ctx context.Context, story string) error {
	for _, name := range slices.Sorted(maps.Keys(w.Remotes)) {
		dctx, cancel := context.WithTimeout(ctx, time.Minute)
		_ = w.Remotes[name].Drop(dctx, w.Run, story)
		cancel()
	}
	return w.Worktrees.Remove(ctx, story)
}
