package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/orchestrator"
)

// Runs of the real pinned CLIs against model-sim that meet a limit mid-run.
// How long the run took to know that the CLI gave up (from the last request
// model-sim refused before the attempt ended to its limited step_finished)
// is logged, not asserted.

// realRunEnv writes each agent's offline home, pointed at its own model-sim,
// into one private home, and puts the CLIs on PATH.
func realRunEnv(t *testing.T, p *runProject, homes map[string]func(offline.Config) (offline.Env, error), urls map[string]string) []string {
	t.Helper()
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	home := realHome(t)
	path := os.Getenv("PATH")
	var env []string
	for agent, homeFor := range homes {
		path = filepath.Dir(realagent.Require(t, agent)) + ":" + path
		oenv, err := homeFor(offline.Config{Home: home, BaseURL: urls[agent], Trusted: []string{root, p.root}})
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, oenv.Pairs()...)
	}
	return append(env, "PATH="+path, "STORY_AUTOMATOR_LIMIT_JITTER=0s")
}

// logKnown logs how long after the CLI's last refused request the run knew
// its attempt limited (fin: the limited step_finished), and returns the
// first refused request.
func logKnown(t *testing.T, srv *modelsim.Server, fin map[string]any) modelsim.Exchange {
	t.Helper()
	knew := eventTime(t, fin)
	var first, last modelsim.Exchange
	for _, ex := range srv.Exchanges() {
		if ex.Limit == "" || ex.At.After(knew) {
			continue
		}
		if first.Seq == 0 {
			first = ex
		}
		last = ex
	}
	if first.Seq == 0 {
		t.Fatalf("model-sim refused no request before the attempt ended limited: %v", fin)
	}
	t.Logf("%s: first refused request %s, last %s; the run knew (step_finished limited, %s) %.1fs after the last",
		fin["agent"], first.At.UTC().Format(time.RFC3339Nano), last.At.UTC().Format(time.RFC3339Nano),
		fin["reason"], knew.Sub(last.At).Seconds())
	return first
}

// untilLimited reads events up to the first limited step_finished.
func (r *liveRun) untilLimited() map[string]any {
	r.t.Helper()
	for {
		ev := r.until("step_finished")
		if ev["finalState"] == "limited" {
			return ev
		}
	}
}

// Claude Code signed in as a subscriber meets its 5-hour limit for 60 s at
// the first story's third step: the run waits it out and ends done, no
// retry used and nothing escalated; status shows the wait; a webhook hears
// limit_wait (with a reset within a minute of the scripted one),
// limit_resumed and done.
func TestRealClaudeRunWaitsOutItsUsageLimit(t *testing.T) {
	t.Parallel()
	realagent.Require(t, "claude")
	// Two requests a step (the agent's tool call, its answer): the limit
	// begins at the third step.
	srv := startModelSim(t, "limit: {after: 4, for: 60s, kind: usage}\n")
	hook := newHookReceiver(t)
	p := newRunProject(t)
	p.addPolicy("notify:\n  webhook: " + hook.URL + "/hook\n")
	env := realRunEnv(t, p, map[string]func(offline.Config) (offline.Env, error){"claude": subscriberClaude},
		map[string]string{"claude": srv.URL()})
	r := p.start(env, "run", "--agent", "claude", "--epic", "1", "--stories", "1-2", "--json", "--completion-rechecks", "1", "--backoff", "10ms")
	fin := r.untilLimited()
	wait := r.until("limit_wait")
	first := logKnown(t, srv, fin)
	resets, err := time.Parse(time.RFC3339, stringOr(wait["resetsAt"]))
	if want := first.At.Add(time.Minute); err != nil || fin["reason"] != "usage_limit" || wait["agent"] != "claude" ||
		resets.Sub(want).Abs() > time.Minute {
		t.Fatalf("limited %v, then limit_wait %v: want usage_limit with a reset within a minute of %s", fin, wait, want.UTC().Format(time.RFC3339))
	}
	st, _ := p.run(nil, "status", "--json")
	if run, _ := st["run"].(map[string]any); run["status"] != "waiting" {
		t.Fatalf("status while waiting: %v", st)
	}
	res, code := r.wait()
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run exited %d: %v\nevents: %v\nstderr:\n%s", code, res, r.kinds(), tail(r.stderr.String(), 3000))
	}
	if c := p.storyCommits(); c["1-1"] != 1 || c["1-2"] != 1 {
		t.Fatalf("story commits %v, want one each for 1.1 and 1.2", c)
	}
	row := p.runsRow()
	if row["escalations"] != float64(0) || row["limits"].(float64) < 1 {
		b, _ := os.ReadFile(stringOr(row["stateFile"]))
		t.Fatalf("runs: %v\nstate:\n%s", row, b)
	}
	// The limited step used no retry: its attempts are the limited ones, then
	// the one that did the work. (Another step's retry, a real agent's
	// incomplete turn, is the run's ordinary business and only logged.)
	path := orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root)
	state, err := orchestrator.LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range state.Unit("1-1").Step(stringOr(fin["step"])).Attempts {
		got = append(got, a.FinalState)
	}
	if strings.Join(got, ",") != "limited,completed" {
		b, _ := os.ReadFile(path)
		t.Fatalf("the limited step's attempts %v, want limited then completed\nstate:\n%s", got, b)
	}
	t.Logf("runs: retries %v, limits %v", row["retries"], row["limits"])
	var kinds []string
	evs := hookEvents(t, hook)
	for _, ev := range evs {
		kinds = append(kinds, stringOr(ev["event"]))
	}
	if strings.Join(kinds, ",") != "limit_wait,limit_resumed,done" || evs[0]["resetsAt"] != wait["resetsAt"] || evs[0]["agent"] != "claude" {
		t.Fatalf("the webhook got %v", evs)
	}
	t.Logf("events: %v", r.kinds())
}

// `run --agent codex --fallback-agent claude` where Codex's plan is at its
// usage limit from its second step (its model-sim limited, Claude's not):
// the step goes to Claude at once, nothing waits, and the story is done.
func TestRealCodexRunAtItsUsageLimitFallsBackToClaudeAtOnce(t *testing.T) {
	t.Parallel()
	realagent.Require(t, "codex")
	realagent.Require(t, "claude")
	limited := startModelSim(t, "limit: {after: 2, for: 1h, kind: usage}\n")
	free := startModelSim(t, "rules: []\n")
	p := newRunProject(t)
	env := realRunEnv(t, p, map[string]func(offline.Config) (offline.Env, error){"codex": offline.Codex, "claude": offline.Claude},
		map[string]string{"codex": limited.URL(), "claude": free.URL()})
	r := p.start(env, "run", "--agent", "codex", "--fallback-agent", "claude", "--epic", "1", "--stories", "1", "--json",
		"--completion-rechecks", "1", "--backoff", "10ms")
	fin := r.untilLimited()
	logKnown(t, limited, fin)
	next := r.until("step_started")
	if fin["agent"] != "codex" || fin["reason"] != "usage_limit" || next["agent"] != "claude" || next["role"] != "fallback" ||
		next["step"] != fin["step"] || next["unit"] != fin["unit"] {
		t.Fatalf("after %v the run started %v; want the same step on claude as fallback", fin, next)
	}
	res, code := r.wait()
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run exited %d: %v\nevents: %v\nstderr:\n%s", code, res, r.kinds(), tail(r.stderr.String(), 3000))
	}
	for _, k := range r.kinds() {
		if strings.HasPrefix(k, "limit_wait@") {
			t.Fatalf("the run waited although claude was free: %v", r.kinds())
		}
	}
	if c := p.storyCommits(); c["1-1"] != 1 {
		t.Fatalf("story commits %v, want one for 1.1", c)
	}
	if row := p.runsRow(); row["retries"] != float64(0) || row["escalations"] != float64(0) {
		t.Fatalf("runs: %v", row)
	}
	t.Logf("events: %v", r.kinds())
}

// Claude Code at its 5-hour limit for two hours, the run allowed to wait
// ten minutes: its step escalates with usage_limit and the reset Claude
// showed, nothing waits, no retry is used.
func TestRealClaudeLimitLongerThanMaxWaitEscalates(t *testing.T) {
	t.Parallel()
	realagent.Require(t, "claude")
	srv := startModelSim(t, "limit: {after: 2, for: 2h, kind: usage}\n")
	p := newRunProject(t)
	env := realRunEnv(t, p, map[string]func(offline.Config) (offline.Env, error){"claude": subscriberClaude},
		map[string]string{"claude": srv.URL()})
	r := p.start(env, "run", "--agent", "claude", "--epic", "1", "--stories", "1", "--json",
		"--completion-rechecks", "1", "--backoff", "10ms", "--max-wait", "10m")
	res, code := r.wait()
	resets, err := time.Parse(time.RFC3339, stringOr(res["resetsAt"]))
	if code != 1 || res["error"] != "usage_limit" || err != nil {
		t.Fatalf("run exited %d: %v (resetsAt: %v)\nevents: %v\nstderr:\n%s", code, res, err, r.kinds(), tail(r.stderr.String(), 3000))
	}
	if d := time.Until(resets); d < 110*time.Minute || d > 2*time.Hour+2*time.Minute {
		t.Fatalf("resetsAt %s is %s away, want model-sim's two hours", resets, d)
	}
	for _, k := range r.kinds() {
		if strings.HasPrefix(k, "limit_wait@") {
			t.Fatalf("the run waited: %v", r.kinds())
		}
	}
	if row := p.runsRow(); row["retries"] != float64(0) || row["escalations"] != float64(1) || row["limits"].(float64) < 1 {
		t.Fatalf("runs: %v", row)
	}
}

// The same Claude run SIGKILLed while it waits out a limit, then resumed:
// the resumed run waits only the rest of the recorded wait, then ends done
// with one commit per story and no retry used.
func TestRealClaudeRunKilledDuringALimitWaitWaitsOnlyTheRest(t *testing.T) {
	t.Parallel()
	realagent.Require(t, "claude")
	srv := startModelSim(t, "limit: {after: 2, for: 30s, kind: usage}\n")
	p := newRunProject(t)
	env := realRunEnv(t, p, map[string]func(offline.Config) (offline.Env, error){"claude": subscriberClaude},
		map[string]string{"claude": srv.URL()})
	args := []string{"--epic", "1", "--stories", "1", "--json", "--completion-rechecks", "1", "--backoff", "10ms"}
	r := p.start(env, append([]string{"run", "--agent", "claude"}, args...)...)
	resumed := p.killDuringWaitAndResume(t, r, env)
	res, code := resumed.wait()
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v\nevents: %v\nstderr:\n%s", code, res, resumed.kinds(), tail(resumed.stderr.String(), 3000))
	}
	if c := p.storyCommits(); c["1-1"] != 1 {
		t.Fatalf("story commits %v, want one for 1.1", c)
	}
	if row := p.runsRow(); row["escalations"] != float64(0) {
		t.Fatalf("runs: %v", row)
	}
}
