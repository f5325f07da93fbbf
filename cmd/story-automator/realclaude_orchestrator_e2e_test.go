package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// orchestratorScript makes model-sim act as an orchestrating session that
// does what the skill says: start the headless run as a background task and
// end the turn; when woken by the task's end, read the status once and stop.
// startCmd is the shell command that starts the run.
func orchestratorScript(bin, startCmd string) string {
	return `
rules:
  - match: "run the stories"
    actions:
      - shell: "` + startCmd + `"
        background: true
      - shell: "sleep 2; '` + bin + `' status"
      - reply: "The run is going in the background; I will be woken when it ends."
  - match: "task-notification"
    actions:
      - shell: "'` + bin + `' status"
      - reply: "The run has ended."
  - match: "say hello"
    actions:
      - reply: "Hello."
  - match: "status --wait --return-after 0"
    actions:
      - shell: "'` + bin + `' status --wait --return-after 0"
        background: true
      - reply: "Waiting in the background."
`
}

// orchestration is a real Claude Code session in tmux, in a sample project
// with the Stop hook installed, against model-sim.
type orchestration struct {
	*runProject
	srv     *modelsim.Server
	socket  string
	env     []string
	claude  string
	history string
	// home is the sessions' HOME (their transcripts are under it).
	home string
}

func newOrchestration(t testing.TB, script func(bin string) string, stepDelay string) *orchestration {
	claude := realagent.Require(t, "claude")
	p := newRunProject(t)
	bin := p.bin
	srv := startModelSim(t, script(bin))
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	p.root = root
	c := exec.Command(bin, "hooks", "install", "--scope", "project", "--force")
	c.Dir, c.Env = root, cleanEnv("PROJECT_ROOT="+root)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("hooks install: %v\n%s", err, out)
	}
	home := realHome(t)
	oenv, err := offline.Claude(offline.Config{Home: home, BaseURL: srv.URL(), Trusted: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	o := &orchestration{runProject: p, srv: srv, socket: tmuxtest.Socket(t), claude: claude, home: home,
		history: filepath.Join(root, ".claude", "story-automator.history.jsonl")}
	// The run's children live on the run project's tmux server; the
	// orchestrating Claude sessions on their own.
	o.env = append(oenv.Pairs(), "PATH="+filepath.Dir(claude)+":"+os.Getenv("PATH"), "PROJECT_ROOT="+root,
		"STORY_AUTOMATOR_TMUX_SOCKET="+p.socket, "STORY_AUTOMATOR_SIM_DELAY="+stepDelay, "STORY_AUTOMATOR_SIM_BEHAVIOUR=bmad", "GIT_AUTHOR_NAME=t",
		"GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	t.Cleanup(func() { shutdownWaitingForPanes(o.socket) })
	return o
}

// start opens a Claude Code session named name with a first prompt.
func (o *orchestration) start(name, prompt string) {
	args := []string{"-L", o.socket, "new-session", "-d", "-s", name, "-x", "160", "-y", "40", "-c", o.root, "--", "env"}
	args = append(append(args, o.env...), o.claude, "--dangerously-skip-permissions", prompt)
	c := exec.Command("tmux", args...)
	c.Env = cleanEnv()
	if out, err := c.CombinedOutput(); err != nil {
		o.t.Fatalf("tmux: %v\n%s", err, out)
	}
}

// turns counts the model requests of the sessions (side requests aside).
func (o *orchestration) turns() int {
	n := 0
	for _, e := range o.srv.Exchanges() {
		if !e.Side {
			n++
		}
	}
	return n
}

// waitFor waits (for an external process) until ok holds.
func (o *orchestration) waitFor(what string, limit time.Duration, ok func() bool) {
	o.t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			o.t.Fatalf("%s never happened; history %v\nscreen:\n%s", what, readDecisions(o.history), capturePane(o.socket, "owner"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (o *orchestration) markerGone() bool {
	_, err := os.Stat(filepath.Join(o.root, ".claude", ".story-automator-active"))
	return os.IsNotExist(err)
}

func (o *orchestration) readMarker() *marker.Marker {
	m, _ := marker.NewStore(o.root, func(string) string { return "" }).Read()
	return m
}

// historySessions lists the session of each hook decision.
func (o *orchestration) historySessions() []string {
	b, _ := os.ReadFile(o.history)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i := strings.Index(l, `"session":"`); i >= 0 {
			rest := l[i+len(`"session":"`):]
			out = append(out, rest[:strings.IndexByte(rest, '"')])
		}
	}
	return out
}

// The orchestrating Claude Code session starts the headless run from its
// Bash tool as a background task and ends its turn: it owns the run through
// its CLAUDE_CODE_SESSION_ID, its stop is let through while the task runs
// (no block, no turn spent), it is woken once when the run ends, and it stops
// within one turn of the end. Three stories take at most 3 turns each — in
// fact a handful for the whole run, whatever the steps' duration. A bystander
// Claude session in the same project is never blocked meanwhile.
func TestRealClaudeOrchestratingSessionRunsThreeStoriesInAFewTurns(t *testing.T) {
	t.Parallel()
	res := orchestrateThreeStories(t, "2s", true)
	if res.requests > 3*3 {
		t.Fatalf("the orchestrating sessions made %d model requests for 3 stories, want at most 9", res.requests)
	}
	// Woken once: the wake turn's requests (status, then the answer) and no more.
	// (Its stop finds no marker: the run is over, nothing is decided.)
	if res.requests-res.atEnd > 2 {
		t.Fatalf("%d model requests after the run ended, want at most one turn's (2)", res.requests-res.atEnd)
	}
	if len(res.decisions) == 0 || res.decisions[0] != "allow-background" {
		t.Fatalf("decisions %v, want the start turn's stop let through for the background task", res.decisions)
	}
	t.Logf("3 stories: %d model requests in all (%d before the run ended), decisions %v", res.requests, res.atEnd, res.decisions)
}

// orchestrated is what one orchestrating session cost.
type orchestrated struct {
	requests, atEnd int
	usage           modelsim.Usage
	decisions       []string
	elapsed         time.Duration
}

// orchestrateThreeStories has a real Claude Code session run stories 1.1-1.3
// of the sample with the sim agent's steps taking stepDelay each, and checks
// the run, the ownership and that the owner was never blocked (and, with
// bystander, that another session in the project is left alone).
func orchestrateThreeStories(t testing.TB, stepDelay string, bystander bool) orchestrated {
	o := newOrchestration(t, func(bin string) string {
		return orchestratorScript(bin, "'"+bin+"' run --agent sim --epic 1 --stories 1-3 > .story-automator/run.out 2>&1")
	}, stepDelay)
	began := time.Now()
	o.start("owner", "Please run the stories.")
	var owner string
	o.waitFor("the run's marker", 60*time.Second, func() bool {
		if m := o.readMarker(); m != nil {
			owner = m.OwnerSession
		}
		return owner != ""
	})
	if bystander {
		o.start("bystander", "Please say hello.")
		o.waitFor("the bystander's answer", 60*time.Second, func() bool { return strings.Contains(capturePane(o.socket, "bystander"), "Hello.") })
	}
	o.waitFor("the run's end", 2*time.Hour, o.markerGone)
	var res orchestrated
	res.atEnd = o.turns()
	o.waitFor("the owner's last stop", 60*time.Second, func() bool {
		return strings.Contains(capturePane(o.socket, "owner"), "The run has ended.")
	})
	// Its Stop hook has returned once the transcript records it after that
	// answer; the marker is gone, so it lets the stop through and nothing
	// more may come: a later request would show below.
	o.waitFor("the owner's last Stop hook", 60*time.Second, func() bool {
		return stopHookRanAfter(claudeTranscriptWith(o.home, "Please run the stories."), "The run has ended.")
	})
	res.requests, res.usage, res.elapsed = o.turns(), o.srv.TotalUsage(), time.Since(began)

	if c := o.storyCommits(); c["1-1"] != 1 || c["1-2"] != 1 || c["1-3"] != 1 {
		t.Fatalf("story commits %v, want one each for 1.1-1.3", c)
	}
	res.decisions = readDecisions(o.history)
	for i, s := range o.historySessions() {
		if s != owner {
			t.Fatalf("a decision about another session than the owner %s: %s (%v)", owner, s, res.decisions)
		}
		if res.decisions[i] == "block" || res.decisions[i] == "breaker-open" {
			t.Fatalf("the owner was blocked while its run worked in the background: %v", res.decisions)
		}
	}
	return res
}

// A Claude Code shell that does not say its session id (an older release):
// the run's marker asks to be claimed, the orchestrating session's first
// stop claims it, and a bystander is not held. When the run's process dies,
// the owner is woken (its background task ended) and released at its next
// stop with a message that says so.
func TestRealClaudeOrchestratingSessionClaimsTheRunAtItsFirstStopAndIsReleasedWhenTheRunDies(t *testing.T) {
	t.Parallel()
	o := newOrchestration(t, func(bin string) string {
		return orchestratorScript(bin, "env -u CLAUDE_CODE_SESSION_ID '"+bin+"' run --agent sim --epic 1 --stories 1-3 > .story-automator/run.out 2>&1")
	}, "30s")
	o.start("owner", "Please run the stories.")
	var m *marker.Marker
	// The hook writes the marker, then appends its history line: wait for both.
	o.waitFor("the claim and its history line", 60*time.Second, func() bool {
		m = o.readMarker()
		return m != nil && m.OwnerSession != "" && len(o.historySessions()) > 0
	})
	if m.ClaimOnStop {
		t.Fatalf("claimed but still asking to be claimed: %+v", m)
	}
	if s := o.historySessions(); len(s) == 0 || s[0] != m.OwnerSession {
		t.Fatalf("claimed by %s, but the first stop was %v", m.OwnerSession, s)
	}
	o.start("bystander", "Please say hello.")
	o.waitFor("the bystander's answer", 60*time.Second, func() bool { return strings.Contains(capturePane(o.socket, "bystander"), "Hello.") })
	if got := o.readMarker(); got == nil || got.OwnerSession != m.OwnerSession {
		t.Fatalf("the bystander moved the owner: %+v", got)
	}
	// The run dies mid-step.
	if m.OwnerPid <= 0 {
		t.Fatalf("no ownerPid in %+v", m)
	}
	if err := syscallKill(m.OwnerPid); err != nil {
		t.Fatal(err)
	}
	o.waitFor("the owner's release", 90*time.Second, func() bool {
		d := readDecisions(o.history)
		return len(d) > 0 && d[len(d)-1] == "release-stale"
	})
	if b, _ := os.ReadFile(o.history); !strings.Contains(string(b), "orchestrator is gone") {
		t.Fatalf("the release does not say the run's orchestrator is gone:\n%s", b)
	}
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// A Codex session (codex exec, its Stop hook installed and trusted) runs the
// same 3 stories the way the skill tells agents without background tasks:
// start the run with &, then one `status --wait` with no bound, in the same
// turn. It owns the run through CODEX_THREAD_ID and spends 2 model requests.
func TestRealCodexOrchestratingSessionRunsThreeStories(t *testing.T) {
	t.Parallel()
	codex := realagent.Require(t, "codex")
	p := newRunProject(t)
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	p.root = root
	bin := p.bin
	srv := startModelSim(t, `
rules:
  - match: "run the stories"
    actions:
      - shell: "'`+bin+`' run --agent sim --epic 1 --stories 1-3 > .story-automator/run.out 2>&1 & sleep 2; '`+bin+`' status --wait --return-after 0"
      - reply: "The run has ended."
`)
	home := realHome(t)
	oenv, err := offline.Codex(offline.Config{Home: home, BaseURL: srv.URL(), Trusted: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(append(oenv.Pairs(), "PATH="+filepath.Dir(codex)+":"+os.Getenv("PATH"), "PROJECT_ROOT="+root,
		"STORY_AUTOMATOR_TMUX_SOCKET="+p.socket, "STORY_AUTOMATOR_SIM_DELAY=1s", "GIT_AUTHOR_NAME=t",
		"GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")...)
	c := exec.Command(bin, "hooks", "install", "--provider", "codex", "--scope", "user", "--force")
	c.Dir, c.Env = root, env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("hooks install: %v\n%s", err, out)
	}
	var owner string
	done := make(chan struct{})
	go func() { // the marker's owner while the run works (an external process)
		defer close(done)
		for deadline := time.Now().Add(3 * time.Minute); owner == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if m, _ := marker.NewStore(root, func(string) string { return "" }).Read(); m != nil {
				owner = m.OwnerSession
			}
		}
	}()
	c = exec.Command(codex, "exec", "--dangerously-bypass-approvals-and-sandbox", "Please run the stories.")
	c.Dir, c.Env = root, env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	<-done
	if cm := p.storyCommits(); cm["1-1"] != 1 || cm["1-2"] != 1 || cm["1-3"] != 1 {
		t.Fatalf("story commits %v, want one each for 1.1-1.3\n%s", cm, out)
	}
	if owner == "" || !strings.Contains(string(out), "session id: "+owner) {
		t.Fatalf("the run's owner %q is not the Codex session:\n%s", owner, out)
	}
	requests := 0
	for _, e := range srv.Exchanges() {
		if !e.Side {
			requests++
		}
	}
	if requests > 3*3 {
		t.Fatalf("the Codex session made %d model requests for 3 stories, want at most 9", requests)
	}
	t.Logf("codex: 3 stories in %d model requests", requests)
}

// Way 2 of the skill with the real Claude Code: the session drives the
// primitives itself — marker create, then per step session spawn, ONE
// blocking monitor-session, heartbeat. It stops after the first step; the
// Stop hook holds it (the marker is its own) with a reason naming
// monitor-session, and it goes on to the last step, removes the marker and
// is let stop.
func TestRealClaudeSessionDrivesThePrimitivesHeldByTheStopHook(t *testing.T) {
	t.Parallel()
	step := func(bin, name string) string {
		return `n=$('` + bin + `' session spawn --step ` + name + ` --story 1.1 --agent sim --json 2>>primitives.log | tee -a primitives.log | sed -n 's/.*\"session\":\"\\([^\"]*\\)\".*/\\1/p') && ` +
			`'` + bin + `' monitor-session \"$n\" --workflow ` + name + ` --json 2>>primitives.log | tee -a primitives.log | grep -q '\"finalState\":\"completed\"' && '` + bin + `' marker heartbeat --story 1.1 --step ` + name + ` >>primitives.log 2>&1`
	}
	o := newOrchestration(t, func(bin string) string {
		return `
rules:
  - match: "drive story 1.1"
    actions:
      - shell: "'` + bin + `' marker create --epic 1 --story 1.1 --remaining 1 && ` + step(bin, "create") + `"
      - reply: "Story 1.1 is created; the next steps come later."
  - match: "monitor-session <the running child"
    actions:
      - shell: "` + step(bin, "dev") + ` && ` + step(bin, "review") + ` && '` + bin + `' marker heartbeat --remaining 0 && '` + bin + `' marker remove"
      - reply: "Story 1.1 is implemented and reviewed; the run is over."
`
	}, "0s")
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(o.root, "primitives.log"))
			t.Logf("primitives.log:\n%s", log)
		}
	})
	o.start("owner", "Please drive story 1.1 yourself.")
	o.waitFor("the end of the session's work", 3*time.Minute, func() bool {
		return strings.Contains(capturePane(o.socket, "owner"), "the run is over.") && o.markerGone()
	})
	decisions := readDecisions(o.history)
	if len(decisions) != 1 || decisions[0] != "block" {
		t.Fatalf("decisions %v, want the one block after the first step", decisions)
	}
	if b, _ := os.ReadFile(o.history); !strings.Contains(string(b), `"reason":"story run in progress"`) {
		t.Fatalf("history: %s", b)
	}
	story, err := filepath.Glob(filepath.Join(o.root, "_bmad-output", "implementation-artifacts", "*1-1-*.md"))
	if err != nil || len(story) != 1 {
		t.Fatalf("story file: %v %v", story, err)
	}
	if b, _ := os.ReadFile(story[0]); !strings.Contains(string(b), "Status: done") {
		t.Fatalf("story 1.1 is not done after review:\n%s", b)
	}
}
