package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testtier"
)

// liveRun is `run --json` going on in the background: each JSON line of its
// stdout, in order, on events (closed at its end).
type liveRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	events chan map[string]any
	seen   []map[string]any
	stderr bytes.Buffer
}

func (p *runProject) start(env []string, args ...string) *liveRun {
	p.t.Helper()
	t := p.t.(*testing.T)
	r := &liveRun{t: t, cmd: p.cmd(env, args...), events: make(chan map[string]any, 1024)}
	r.cmd.Stderr = &r.stderr
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill() })
	go func() {
		defer close(r.events)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				r.events <- ev
			}
		}
	}()
	return r
}

// until reads events up to the first of kind and returns it; the run's end
// before one came fails the test.
func (r *liveRun) until(kind string) map[string]any {
	r.t.Helper()
	for ev := range r.events {
		r.seen = append(r.seen, ev)
		if ev["event"] == kind {
			return ev
		}
	}
	r.t.Fatalf("the run ended without a %s event: %v\nstderr:\n%s", kind, r.seen, tail(r.stderr.String(), 3000))
	return nil
}

// wait reads the rest of the events and returns the last line and the exit code.
func (r *liveRun) wait() (map[string]any, int) {
	r.t.Helper()
	for ev := range r.events {
		r.seen = append(r.seen, ev)
	}
	code := exitCode(r.t, r.cmd, r.cmd.Wait())
	if len(r.seen) == 0 {
		r.t.Fatalf("the run printed nothing (exit %d)\nstderr:\n%s", code, r.stderr.String())
	}
	return r.seen[len(r.seen)-1], code
}

// kinds lists the events seen, "kind@unit/step/agent".
func (r *liveRun) kinds() []string {
	var out []string
	for _, ev := range r.seen {
		out = append(out, stringOr(ev["event"])+"@"+stringOr(ev["unit"])+"/"+stringOr(ev["step"])+"/"+stringOr(ev["agent"]))
	}
	return out
}

// eventTime is an event's "at".
func eventTime(t *testing.T, ev map[string]any) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, stringOr(ev["at"]))
	if err != nil {
		t.Fatalf("event without its time: %v", ev)
	}
	return at
}

// limitEnv limits the sim agent for lasts from the run's third child, with
// no jitter after the reset.
func limitEnv(lasts string) []string {
	return []string{"STORY_AUTOMATOR_SIM_LIMIT=after=2 for=" + lasts, "STORY_AUTOMATOR_LIMIT_JITTER=0s"}
}

// hookEvents are the events a webhook receiver got, in order.
func hookEvents(t *testing.T, hook *hookReceiver) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, r := range hook.requests() {
		var ev map[string]any
		if err := json.Unmarshal([]byte(r.Body), &ev); err != nil {
			t.Fatalf("webhook body %q: %v", r.Body, err)
		}
		out = append(out, ev)
	}
	return out
}

// The sim agent meets a usage limit of ~15 s at its third step: the run
// waits it out and ends done without an escalation or a retry used; while
// it waits, status and the marker say so; a webhook hears limit_wait,
// limit_resumed and done, in that order.
func TestE2ERunWaitsOutAUsageLimitAndGoesOnByItself(t *testing.T) {
	testtier.Integration(t)
	t.Parallel()
	hook := newHookReceiver(t)
	p := newRunProject(t)
	p.addPolicy("notify:\n  webhook: " + hook.URL + "/hook\n")
	r := p.start(limitEnv("15s"), append([]string{"run", "--agent", "sim", "--json"}, fast...)...)
	wait := r.until("limit_wait")
	if wait["agent"] != "sim" || wait["reason"] != "usage_limit" || wait["unit"] != "1.1" || stringOr(wait["resetsAt"]) == "" {
		t.Fatalf("limit_wait %v", wait)
	}
	resets, err := time.Parse(time.RFC3339, stringOr(wait["resetsAt"]))
	if err != nil {
		t.Fatal(err)
	}
	// While it waits: status says waiting, with the reason, agent and time left.
	st, code := p.run(nil, "status", "--json")
	run, _ := st["run"].(map[string]any)
	w, _ := run["wait"].(map[string]any)
	if code != 0 || run["status"] != "waiting" || w["reason"] != "usage_limit" || w["agent"] != "sim" {
		t.Fatalf("status while waiting: %d %v", code, st)
	}
	if left, ok := w["remainingSeconds"].(float64); !ok || left <= 0 || left > 16 {
		t.Fatalf("status: remainingSeconds %v, want the rest of a 15 s wait", w["remainingSeconds"])
	}
	if m := p.marker(); m == nil || m.Waiting == nil || m.Waiting.Reason != "usage_limit" || m.Waiting.Agent != "sim" ||
		m.Waiting.ResetsAt != wait["resetsAt"] {
		t.Fatalf("marker while waiting: %+v", m)
	}
	resumed := r.until("limit_resumed")
	if at := eventTime(t, resumed); at.Before(resets) {
		t.Fatalf("the run went on at %s, before the reset %s", at, resets)
	}
	res, code := r.wait()
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run exited %d: %v\nevents: %v\nstderr:\n%s", code, res, r.kinds(), tail(r.stderr.String(), 3000))
	}
	for _, k := range []string{"1-1", "1-2", "1-3", "1-4"} {
		if n := p.storyCommits()[k]; n != 1 {
			t.Fatalf("story %s has %d commits", k, n)
		}
	}
	if row := p.runsRow(); row["outcome"] != "done" || row["retries"] != float64(0) || row["escalations"] != float64(0) || row["limits"].(float64) < 1 {
		t.Fatalf("runs: %v", row)
	}
	// The webhook: limit_wait, limit_resumed and done, in that order.
	var kinds []string
	evs := hookEvents(t, hook)
	for _, ev := range evs {
		kinds = append(kinds, stringOr(ev["event"]))
	}
	if strings.Join(kinds, ",") != "limit_wait,limit_resumed,done" {
		t.Fatalf("the webhook got %v", kinds)
	}
	if evs[0]["agent"] != "sim" || evs[0]["reason"] != "usage_limit" || evs[0]["resetsAt"] != wait["resetsAt"] || evs[1]["agent"] != "sim" {
		t.Fatalf("limit events %v", evs[:2])
	}
}

// The same run SIGKILLed during its wait: `run --resume` waits only the
// rest (the same end, recorded in the state document) and goes on, each
// story committed once.
func TestE2EARunKilledDuringALimitWaitWaitsOnlyTheRestOnResume(t *testing.T) {
	testtier.Integration(t)
	t.Parallel()
	p := newRunProject(t)
	env := limitEnv("20s")
	r := p.start(env, append([]string{"run", "--agent", "sim", "--json"}, fast...)...)
	resumed := p.killDuringWaitAndResume(t, r, env)
	res, code := resumed.wait()
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v\nevents: %v", code, res, resumed.kinds())
	}
	for _, k := range []string{"1-1", "1-2", "1-3", "1-4"} {
		if n := p.storyCommits()[k]; n != 1 {
			t.Fatalf("story %s has %d commits", k, n)
		}
	}
	if row := p.runsRow(); row["retries"] != float64(0) || row["escalations"] != float64(0) {
		t.Fatalf("runs: %v", row)
	}
}

// A limit that lifts later than --max-wait is not waited for: the step
// escalates with usage_limit, its reset time in resetsAt and the action.
func TestE2EALimitLongerThanMaxWaitEscalatesWithUsageLimit(t *testing.T) {
	testtier.Integration(t)
	t.Parallel()
	p := newRunProject(t)
	r := p.start(limitEnv("1h"), append([]string{"run", "--agent", "sim", "--json", "--max-wait", "10m"}, fast...)...)
	res, code := r.wait()
	resets, err := time.Parse(time.RFC3339, stringOr(res["resetsAt"]))
	if code != 1 || res["error"] != "usage_limit" || err != nil {
		t.Fatalf("run exited %d: %v (resetsAt: %v)\nevents: %v", code, res, err, r.kinds())
	}
	if d := time.Until(resets); d < 50*time.Minute || d > time.Hour+time.Minute {
		t.Fatalf("resetsAt %s is %s away, want the hour's limit", resets, d)
	}
	if action := stringOr(res["action"]); !strings.Contains(action, resets.UTC().Format("15:04")) {
		t.Fatalf("the action does not name the reset time %s: %q", resets.UTC().Format("15:04"), action)
	}
	for _, k := range r.kinds() {
		if strings.HasPrefix(k, "limit_wait@") {
			t.Fatalf("the run waited: %v", r.kinds())
		}
	}
	if row := p.runsRow(); row["retries"] != float64(0) || row["escalations"] != float64(1) {
		t.Fatalf("runs: %v", row)
	}
}

// killDuringWaitAndResume SIGKILLs run r once it waits out a limit, then
// resumes it with env and checks that the resumed run waits until the
// recorded end of that wait, no sooner; it returns the resumed run.
func (p *runProject) killDuringWaitAndResume(t *testing.T, r *liveRun, env []string) *liveRun {
	t.Helper()
	r.until("limit_wait")
	rec := p.state().Wait
	if rec == nil || rec.Until == "" {
		t.Fatalf("the state document records no wait: %+v", p.state())
	}
	until, err := time.Parse(time.RFC3339Nano, rec.Until)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = r.wait()
	resumed := p.start(env, "run", "--resume", "--json")
	again := resumed.until("limit_wait")
	if w := p.state().Wait; w == nil || w.Until != rec.Until || again["resetsAt"] != rec.ResetsAt {
		t.Fatalf("the resumed run waits until %+v, want the recorded %s (event %v)", w, rec.Until, again)
	}
	step := resumed.until("step_started")
	if at := eventTime(t, step); at.Before(until) {
		t.Fatalf("the resumed run's first step started at %s, before the wait's end %s", at, until)
	}
	return resumed
}

// runsRow is the newest run's row of `runs --json`.
func (p *runProject) runsRow() map[string]any {
	p.t.Helper()
	runs, code := p.run(nil, "runs", "--json")
	list, _ := runs["runs"].([]any)
	if code != 0 || len(list) == 0 {
		p.t.Fatalf("runs: %d %v", code, runs)
	}
	return list[0].(map[string]any)
}
