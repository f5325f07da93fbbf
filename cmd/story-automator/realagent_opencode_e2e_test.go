package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// OpenCode runs inside this tool's sandbox, whose /tmp is private: its
// home (its config, its database) lies outside the temp dir, where a
// user's is.
func newRealOpenCodeProject(t *testing.T, script string) *realClaudeProject {
	t.Helper()
	cli := realagent.Require(t, "opencode")
	srv := startModelSim(t, script)
	p := newSessionProject(t, tmuxtest.Socket(t))
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	p.root = root
	home := wrappedHome(t)
	oenv, err := offline.OpenCode(offline.Config{Home: home, BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"))
	return &realClaudeProject{sessionProject: p, env: env, home: home, srv: srv}
}

// wrappedHome is a private home outside the temp dir, for a CLI that runs
// inside this tool's sandbox.
func wrappedHome(t *testing.T) string {
	t.Helper()
	home := outsideTmp(t, "home")
	realagent.StopStrays(t, home)
	return home
}

// A confined OpenCode child (`opencode run --auto`, inside this tool's
// sandbox) writes the proof through its own shell tool and is seen
// completed by its exit; the time from model-sim's last answer to
// monitor-session's return is logged (not asserted: the machine's load
// decides it).
func TestRealOpenCodeChildIsSeenCompletedByItsExit(t *testing.T) {
	t.Parallel()
	p := newRealOpenCodeProject(t, proofScript)
	name := p.spawn(p.env, "--agent", "opencode", "--prompt", "Please write the proof file.")
	p.expectProof(t, name)
	returned := time.Now()
	var last time.Time
	for _, e := range p.srv.Exchanges() {
		if !e.Side {
			last = e.At
		}
	}
	if last.IsZero() {
		t.Fatal("model-sim saw no main request")
	}
	t.Logf("opencode: seen completed %d ms after model-sim's last answer", returned.Sub(last).Milliseconds())
	logModelRoute(t, "opencode", p.sessionsDir, name)
}

// `run --agent opencode` of two stories, each step a confined OpenCode
// child doing its work through its own shell tool: both end done, one
// commit each, and the usage read from OpenCode's database equals what
// model-sim answered (testRealRun).
func TestRealOpenCodeRunFinishesTwoStories(t *testing.T) {
	t.Parallel()
	testRealRun(t, "opencode", offline.OpenCode, false)
}

// The same in two parallel worktrees: each confined child writes its own
// worktree and what a commit writes in the repository's .git, and its
// usage is found by its worktree's folder.
func TestRealOpenCodeWorktreeRunReadsEveryAttemptsUsage(t *testing.T) {
	t.Parallel()
	expectWorktrees(t, testRealRun(t, "opencode", offline.OpenCode, false, "--parallel", "2"))
}

// The hostile model (model-sim's escape) in a confined OpenCode child:
// every write outside its story is denied (next to the project, HOME, the
// host's /tmp, the repository's hooks) and the story still ends done, its
// toolchains and `git add -A` working. OpenCode calls its model API from
// inside this tool's sandbox, through its proxy, which lets model-sim
// through and refuses the hostile fetch of another host; the direct
// connections fail in the sandbox's network namespace.
func TestRealOpenCodeSandboxHoldsAHostileModelsWrites(t *testing.T) {
	t.Parallel()
	h := hostileRun(t, "opencode", offline.OpenCode)
	if !h.state.Config.Confined() {
		t.Fatalf("recorded sandbox %q, want on by default", h.state.Config.Sandbox)
	}
	for _, f := range append(h.targets, h.inWorktree...) {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the hostile model wrote %s outside its story", f)
		}
	}
	var seen strings.Builder
	for _, e := range h.srv.Exchanges() {
		seen.Write(e.Request)
	}
	for _, want := range []string{"DENIED write " + filepath.Dir(h.targets[1]), "DENIED write .git/hooks/", agentToolsOK, agentGitAddOK} {
		if !strings.Contains(seen.String(), want) {
			t.Errorf("%q never reached the model", want)
		}
	}
	if t.Failed() {
		t.Logf("what the agent's shell told the model: %q", triedLines().FindAllString(seen.String(), -1))
	}
	h.expectNetworkHeld(t, seen.String())
}

// From two parallel worktrees the escape also tries the project's own
// checkout and the repository's hooks: both denied, the stories done.
func TestRealOpenCodeSandboxHoldsAHostileModelInParallelWorktrees(t *testing.T) {
	t.Parallel()
	h := hostileRun(t, "opencode", offline.OpenCode, "--stories", "1-2", "--parallel", "2")
	expectWorktrees(t, h.state)
	for _, f := range append(h.targets, h.inWorktree...) {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the hostile model wrote %s outside its story", f)
		}
	}
	var seen strings.Builder
	for _, e := range h.srv.Exchanges() {
		seen.Write(e.Request)
	}
	for _, f := range h.inWorktree {
		if !strings.Contains(seen.String(), "DENIED write "+f) {
			t.Errorf("no denied write to %s reached the model: the escape from a worktree was not tried", f)
		}
	}
}

// The control: with --sandbox off the same writes land (its hook too,
// which the run's git guard catches).
func TestRealOpenCodeSandboxOffLetsTheHostileModelThrough(t *testing.T) {
	t.Parallel()
	expectThrough(t, hostileRunTo(t, "opencode", offline.OpenCode, orchestrator.CodeGitTampered, "--sandbox", "off"))
}

// OpenCode at a usage limit retries five times (about 100 s), then `run`
// prints the API's error and exits 1: the child ends limited, usage_limit,
// with the reset its database kept from the API's answer (its output
// names none), within a minute of the scripted one. The time from the
// first refused request to the monitor knowing is logged.
func TestRealOpenCodeChildAtItsUsageLimitEndsLimited(t *testing.T) {
	t.Parallel()
	p := newRealOpenCodeProject(t, "limit: {after: 0, for: 1h, kind: usage}\n")
	name := p.spawn(p.env, "--agent", "opencode", "--prompt", "Please write the proof file.")
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "6m")
	knew := time.Now()
	first, ok := firstLimited(p.srv)
	if code != 9 || res["finalState"] != "limited" || res["reason"] != "usage_limit" || res["agent"] != "opencode" || !ok {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v (limited exchange: %v)\noutput:\n%s", code, res, ok, tail(string(out), 3000))
	}
	resets, err := time.Parse(time.RFC3339, stringOr(res["resetsAt"]))
	if want := first.At.Add(time.Hour); err != nil || resets.Sub(want).Abs() > time.Minute {
		t.Fatalf("resetsAt %v (%v), want within a minute of %s", res["resetsAt"], err, want.UTC().Format(time.RFC3339))
	}
	t.Logf("opencode: the CLI met the limit at %s; the monitor knew %.1fs later (resetsAt %s)",
		first.At.UTC().Format(time.RFC3339Nano), knew.Sub(first.At).Seconds(), res["resetsAt"])
}

// OpenCode's config folder, which it writes at each start, is a private
// copy for a confined child: a plugin the child plants there (the model's
// shell writes it, and the write works) never reaches the user's folder,
// where their next, unconfined, OpenCode would load it; OpenCode still
// starts and does the work. With --sandbox off the plant lands.
func TestRealOpenCodeChildsConfigFolderIsAPrivateCopy(t *testing.T) {
	t.Parallel()
	const script = `
rules:
  - match: "write the proof"
    actions:
      - shell: "printf 'proof\\n' > proof.txt && mkdir -p \"$HOME/.config/opencode/plugin\" && echo planted > \"$HOME/.config/opencode/plugin/planted.js\" && echo PLANTED-INSIDE"
      - reply: "Wrote proof.txt."
`
	for _, off := range []bool{false, true} {
		p := newRealOpenCodeProject(t, script)
		args := []string{"--agent", "opencode", "--prompt", "Please write the proof file."}
		if off {
			args = append(args, "--sandbox", "off")
		}
		name := p.spawn(p.env, args...)
		p.expectProof(t, name)
		var seen strings.Builder
		for _, e := range p.srv.Exchanges() {
			seen.Write(e.Request)
		}
		if !strings.Contains(seen.String(), "PLANTED-INSIDE") {
			t.Fatalf("sandbox off %v: the plant's write failed inside, or never ran", off)
		}
		_, err := os.Stat(filepath.Join(p.home, ".config", "opencode", "plugin", "planted.js"))
		if landed := err == nil; landed != off {
			t.Fatalf("sandbox off %v: the planted plugin in the user's config folder: %v", off, err)
		}
	}
}

// agentHome is a private home for the named CLI: outside the temp dir
// for one that runs inside this tool's sandbox (wrappedHome).
func agentHome(t *testing.T, name string) string {
	t.Helper()
	if p, _ := agent.LookupProfile(name); p.Sandbox.Kind == agent.SandboxWrapped {
		return wrappedHome(t)
	}
	return realHome(t)
}

// The planted credentials (credentialRun): confined, OpenCode's tools read
// none of them (this tool's sandbox hides them from the whole CLI), while
// the control files reach the model; with --sandbox off every one does.
func TestRealOpenCodeChildReadsNoCredentials(t *testing.T) {
	t.Parallel()
	credentialRun(t, "opencode", offline.OpenCode).expectHidden(t)
}

func TestRealOpenCodeSandboxOffLetsTheCredentialsThrough(t *testing.T) {
	t.Parallel()
	credentialRun(t, "opencode", offline.OpenCode, "--sandbox", "off").expectLeaked(t)
}
