package orchestrator

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/monitor"
)

// eventLog records a run's events.
type eventLog struct {
	mu  sync.Mutex
	evs []Event
}

func (l *eventLog) Report(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, ev)
}

func (l *eventLog) of(kind string) []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, ev := range l.evs {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// limitHarness is one story whose dev step's first `limited` attempts by
// agent `who` ("" = any) end limited with reason and reset (zero = unknown);
// it records the clock's time at every request.
type limitHarness struct {
	*harness
	events *eventLog
	mu     sync.Mutex
	at     []time.Time
}

func newLimitHarness(t *testing.T, limited int, who, reason string, reset func(now time.Time) time.Time) *limitHarness {
	h := &limitHarness{harness: newHarness(t, "1-1"), events: &eventLog{}}
	h.project.retro["1"] = true
	n := 0
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		now := h.clock.Now()
		h.mu.Lock()
		defer h.mu.Unlock()
		if req.Step != StepDev {
			return StepResult{FinalState: FinalCompleted}
		}
		h.at = append(h.at, now)
		if n < limited && (who == "" || req.Agent == who) {
			n++
			res := StepResult{FinalState: FinalLimited, Reason: reason}
			if reset != nil {
				res.ResetsAt = reset(now)
			}
			return res
		}
		return StepResult{FinalState: FinalCompleted}
	}
	return h
}

func (h *limitHarness) options() Options {
	o := h.harness.options()
	o.FallbackAgent = ""
	return o
}

func (h *limitHarness) runWith(ctx context.Context, o Options) (*Result, error) {
	d := h.deps()
	d.Report = h.events
	return Run(ctx, o, d)
}

func (h *limitHarness) devTimes() []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.at...)
}

func in(d time.Duration) func(time.Time) time.Time {
	return func(now time.Time) time.Time { return now.Add(d).Truncate(time.Second) }
}

func devAttempts(t *testing.T, st *State) []Attempt {
	t.Helper()
	return st.Unit("1-1").Step(StepDev).Attempts
}

func TestLimitedAttemptsUseNoRetry(t *testing.T) {
	h := newLimitHarness(t, 3, "", monitor.ReasonRateLimit, in(10*time.Minute))
	sp := h.policy.Steps[StepDev]
	sp.Retries = 0 // any attempt that counted would escalate the step
	h.policy.Steps[StepDev] = sp
	res, err := h.runWith(context.Background(), h.options())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	st := h.saved(res)
	as := devAttempts(t, st)
	if len(as) != 4 || as[0].FinalState != FinalLimited || as[0].Reason != monitor.ReasonRateLimit || as[3].FinalState != FinalCompleted {
		t.Fatalf("attempts %+v", as)
	}
	if as[0].ResetsAt == "" {
		t.Fatalf("a limited attempt keeps its reset time: %+v", as[0])
	}
	if st.Status != RunDone || st.Wait != nil || len(st.Limited) != 0 {
		t.Fatalf("status %s wait %+v limited %+v", st.Status, st.Wait, st.Limited)
	}
	if sum := Summarize(st, res.StatePath); sum.Retries != 0 || sum.Limits != 3 {
		t.Fatalf("runs: retries %d limits %d, want 0 and 3", sum.Retries, sum.Limits)
	}
}

func TestLimitGoesToTheFallbackAtOnce(t *testing.T) {
	h := newLimitHarness(t, 1, "sim", monitor.ReasonUsageLimit, in(time.Hour))
	o := h.options()
	o.FallbackAgent = "alt"
	if _, err := h.runWith(context.Background(), o); err != nil {
		t.Fatalf("run: %v", err)
	}
	reqs := strings.Join(h.steps.requests(), " ")
	if !strings.Contains(reqs, "1-1/dev#1@sim 1-1/dev#2@alt") {
		t.Fatalf("requests %s: the fallback should take dev's second attempt", reqs)
	}
	times := h.devTimes()
	if gap := times[1].Sub(times[0]); gap > time.Second {
		t.Fatalf("the fallback started %s after the limit, want at once", gap)
	}
	if len(h.events.of(EventLimitWait)) != 0 {
		t.Fatal("a free fallback means no wait")
	}
}

func TestLimitedFallbackIsSkippedUntilItsReset(t *testing.T) {
	// Both agents are limited: the run waits for the one free first.
	h := newLimitHarness(t, 2, "", monitor.ReasonUsageLimit, nil)
	n := 0
	resets := []time.Duration{3 * time.Hour, time.Hour}
	script := h.steps.script
	h.steps.script = func(ctx context.Context, req StepRequest) StepResult {
		res := script(ctx, req)
		if res.FinalState == FinalLimited {
			res.ResetsAt = h.clock.Now().Add(resets[n])
			n++
		}
		return res
	}
	o := h.options()
	o.FallbackAgent = "alt"
	if _, err := h.runWith(context.Background(), o); err != nil {
		t.Fatalf("run: %v", err)
	}
	reqs := strings.Join(h.steps.requests(), " ")
	if !strings.Contains(reqs, "1-1/dev#1@sim 1-1/dev#2@alt 1-1/dev#3@alt") {
		t.Fatalf("requests %s", reqs)
	}
	times := h.devTimes()
	if gap := times[2].Sub(times[1]); gap < time.Hour || gap > time.Hour+limitJitterMax+time.Second {
		t.Fatalf("waited %s for alt's one-hour limit", gap)
	}
}

func TestLimitWaitEndsAtTheResetAndTheRunGoesOn(t *testing.T) {
	h := newLimitHarness(t, 1, "", monitor.ReasonUsageLimit, in(2*time.Hour))
	h.env[EnvLimitJitter] = "0s"
	res, err := h.runWith(context.Background(), h.options())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	times := h.devTimes()
	reset := times[0].Add(2 * time.Hour).Truncate(time.Second)
	if times[1].Before(reset) || times[1].After(reset.Add(time.Second)) {
		t.Fatalf("the second attempt started at %s, want just after the reset %s", times[1], reset)
	}
	waits := h.events.of(EventLimitWait)
	if len(waits) != 1 || waits[0].Agent != "sim" || waits[0].Reason != monitor.ReasonUsageLimit ||
		waits[0].ResetsAt != marker.Timestamp(reset) || waits[0].Unit != "1.1" || waits[0].Step != StepDev {
		t.Fatalf("limit_wait events %+v", waits)
	}
	if r := h.events.of(EventLimitResumed); len(r) != 1 || r[0].Agent != "sim" {
		t.Fatalf("limit_resumed events %+v", r)
	}
	for _, d := range h.clock.slept() {
		if d > waitSlice {
			t.Fatalf("a wait slept %s at once, want slices of at most %s", d, waitSlice)
		}
	}
	if st := h.saved(res); st.Status != RunDone || st.Wait != nil {
		t.Fatalf("status %s, wait %+v", st.Status, st.Wait)
	}
}

func TestLimitWithoutResetBacksOffFromOneMinute(t *testing.T) {
	h := newLimitHarness(t, 3, "", monitor.ReasonRateLimit, nil)
	if _, err := h.runWith(context.Background(), h.options()); err != nil {
		t.Fatalf("run: %v", err)
	}
	times := h.devTimes()
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute}
	for i, w := range want {
		if gap := times[i+1].Sub(times[i]); gap < w || gap > w+time.Second {
			t.Fatalf("wait %d was %s, want %s", i+1, gap, w)
		}
	}
	if waits := h.events.of(EventLimitWait); len(waits) != 3 || waits[0].ResetsAt != "" {
		t.Fatalf("limit_wait events %+v", waits)
	}
}

func TestLimitLongerThanMaxWaitEscalatesWithUsageLimit(t *testing.T) {
	h := newLimitHarness(t, 1, "", monitor.ReasonUsageLimit, in(3*time.Hour))
	o := h.options()
	o.MaxWait = DurationOf(2 * time.Hour)
	res, err := h.runWith(context.Background(), o)
	if !errors.Is(err, ErrEscalated) {
		t.Fatalf("run: %v, want escalated", err)
	}
	st := h.saved(res)
	esc := st.Escalation
	reset := marker.Timestamp(h.devTimes()[0].Add(3 * time.Hour).Truncate(time.Second))
	if esc == nil || esc.Code != CodeUsageLimit || esc.ResetsAt != reset || !strings.Contains(esc.Action, humanTime(reset)) {
		t.Fatalf("escalation %+v, want usage_limit with the reset %s", esc, reset)
	}
	if len(h.devTimes()) != 1 || len(h.events.of(EventLimitWait)) != 0 {
		t.Fatal("a wait past max-wait is never begun")
	}
	if st.Unit("1-1").Step(StepDev).Status != StatusEscalated {
		t.Fatal("dev should be escalated")
	}
}

func TestOnLimitEscalateEscalatesAtOnce(t *testing.T) {
	h := newLimitHarness(t, 1, "sim", monitor.ReasonUsageLimit, in(time.Hour))
	h.policy.OnLimit = OnLimitEscalate
	o := h.options()
	o.FallbackAgent = "alt"
	res, err := h.runWith(context.Background(), o)
	if !errors.Is(err, ErrEscalated) || h.saved(res).Escalation.Code != CodeUsageLimit {
		t.Fatalf("run: %v", err)
	}
}

func TestOnLimitWaitSkipsTheFallback(t *testing.T) {
	h := newLimitHarness(t, 1, "sim", monitor.ReasonUsageLimit, in(time.Hour))
	h.policy.OnLimit = OnLimitWait
	o := h.options()
	o.FallbackAgent = "alt"
	if _, err := h.runWith(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if reqs := strings.Join(h.steps.requests(), " "); !strings.Contains(reqs, "1-1/dev#1@sim 1-1/dev#2@sim") {
		t.Fatalf("requests %s: onLimit wait keeps the agent", reqs)
	}
}

func TestWaitPastTheRunsMaxDurationPausesForBudget(t *testing.T) {
	h := newLimitHarness(t, 1, "", monitor.ReasonUsageLimit, in(2*time.Hour))
	o := h.options()
	o.Budget = &Budget{MaxDuration: DurationOf(time.Hour)}
	res, err := h.runWith(context.Background(), o)
	if !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("run: %v, want the budget reached", err)
	}
	if len(h.devTimes()) != 1 || len(h.events.of(EventLimitResumed)) != 0 {
		t.Fatal("a run past its budget is never resumed by a limit's end")
	}
	if st := h.saved(res); st.Status != RunPaused || st.Escalation.Code != CodeBudgetExceeded {
		t.Fatalf("status %s escalation %+v", st.Status, st.Escalation)
	}
}

func TestRunPausedDuringAWaitIsNotResumedByTheLimitsEnd(t *testing.T) {
	h := newLimitHarness(t, 1, "", monitor.ReasonUsageLimit, in(2*time.Hour))
	var once sync.Once
	h.clock.onSleep = func(time.Duration) {
		once.Do(func() {
			if _, err := h.store().Modify(context.Background(), func(m *marker.Marker) error { m.Pause("by hand"); return nil }); err != nil {
				t.Error(err)
			}
		})
	}
	res, err := h.runWith(context.Background(), h.options())
	if !errors.Is(err, ErrPausedByHand) {
		t.Fatalf("run: %v, want paused by hand", err)
	}
	if len(h.devTimes()) != 1 || len(h.events.of(EventLimitResumed)) != 0 {
		t.Fatalf("the paused run went on: %v", h.steps.requests())
	}
	if slept := h.clock.slept(); len(slept) != 1 {
		t.Fatalf("slept %v: the wait should stop at the pause", slept)
	}
	st := h.saved(res)
	if st.Status != RunPaused || st.Wait == nil {
		t.Fatalf("status %s wait %+v: the wait stays recorded for --resume", st.Status, st.Wait)
	}
	if m, _ := h.store().Read(); m.Status != marker.StatusPaused || m.PauseReason != "by hand" || m.Waiting != nil {
		t.Fatalf("marker %+v", m)
	}
}

// killDuringWait runs until the wait has slept `after`, then stands for a
// SIGKILL: the state document, its journal and the marker are put back as
// they were at that moment.
func killDuringWait(t *testing.T, h *limitHarness, after time.Duration) *Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var slept time.Duration
	var snap map[string][]byte
	h.clock.onSleep = func(d time.Duration) {
		slept += d
		if snap == nil && slept >= after {
			snap = snapshotFiles(t, h.root)
			cancel()
		}
	}
	res, err := h.runWith(ctx, h.options())
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("run: %v", err)
	}
	h.clock.onSleep = nil
	restoreFiles(t, h.root, snap)
	return res
}

func TestResumeAfterAKillDuringAWaitWaitsOnlyTheRest(t *testing.T) {
	h := newLimitHarness(t, 1, "", monitor.ReasonUsageLimit, in(2*time.Hour))
	res := killDuringWait(t, h, 30*time.Minute)
	st := h.saved(res)
	if st.Status != RunWaiting || st.Wait == nil || st.Wait.Agent != "sim" {
		t.Fatalf("the document a kill leaves: status %s wait %+v", st.Status, st.Wait)
	}
	if m, _ := h.store().Read(); m.Waiting == nil || m.Waiting.ResumesAt != st.Wait.Until || m.Status != marker.StatusActive {
		t.Fatalf("the marker a kill leaves: %+v", m)
	}
	until := st.Wait.UntilTime()
	resumeAt := h.clock.Now()
	o := h.options()
	o.Resume = true
	if _, err := h.runWith(context.Background(), o); err != nil {
		t.Fatalf("resume: %v", err)
	}
	times := h.devTimes()
	if len(times) != 2 || times[1].Before(until) || times[1].After(until.Add(time.Second)) {
		t.Fatalf("resumed at %s, second attempt at %v, want just after %s", resumeAt, times, until)
	}
	if waited := times[1].Sub(resumeAt); waited > 91*time.Minute {
		t.Fatalf("the resumed run waited %s, more than the rest", waited)
	}
}

func TestResumeAfterTheResetPassedGoesOnAtOnce(t *testing.T) {
	h := newLimitHarness(t, 1, "", monitor.ReasonUsageLimit, in(2*time.Hour))
	res := killDuringWait(t, h, time.Minute)
	until := h.saved(res).Wait.UntilTime()
	h.clock.advance(3 * time.Hour) // the machine slept through the reset
	before := len(h.clock.slept())
	o := h.options()
	o.Resume = true
	if _, err := h.runWith(context.Background(), o); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if n := len(h.clock.slept()); n != before {
		t.Fatalf("slept %v after the reset had passed", h.clock.slept()[before:])
	}
	if times := h.devTimes(); len(times) != 2 || times[1].Before(until) {
		t.Fatalf("attempts at %v", times)
	}
	if r := h.events.of(EventLimitResumed); len(r) == 0 {
		t.Fatal("no limit_resumed event")
	}
}

func TestClockJumpPastTheResetEndsTheWait(t *testing.T) {
	h := newLimitHarness(t, 1, "", monitor.ReasonUsageLimit, in(5*time.Hour))
	var once sync.Once
	h.clock.onSleep = func(time.Duration) { once.Do(func() { h.clock.advance(6 * time.Hour) }) }
	if _, err := h.runWith(context.Background(), h.options()); err != nil {
		t.Fatalf("run: %v", err)
	}
	if slept := h.clock.slept(); len(slept) != 1 {
		t.Fatalf("slept %v: the wall clock past the reset should end the wait", slept)
	}
}

func TestAPIFaultsRetryWithBackoffAndUseNoRetry(t *testing.T) {
	h := newLimitHarness(t, 3, "", monitor.ReasonOverloaded, nil)
	sp := h.policy.Steps[StepDev]
	sp.Retries = 0
	h.policy.Steps[StepDev] = sp
	res, err := h.runWith(context.Background(), h.options())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if len(h.events.of(EventLimitWait)) != 0 {
		t.Fatal("an API fault is retried, not waited out")
	}
	if got, want := h.clock.slept(), []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second}; !equalDurations(got, want) {
		t.Fatalf("slept %v, want the step's backoff %v", got, want)
	}
	data, err := os.ReadFile(res.StatePath)
	if err != nil || !strings.Contains(string(data), "verified (4 attempts, 3 API faults)") {
		t.Fatalf("the progress table should tell API faults apart (%v):\n%s", err, data)
	}
	sum := Summarize(h.saved(res), res.StatePath)
	if sum.APIFaults != 3 || sum.Limits != 0 || sum.Retries != 0 {
		t.Fatalf("runs counts: %+v", sum)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWaitingRunShowsInTheStateDocument(t *testing.T) {
	st := &State{Version: StateVersion, RunID: "run-x", Status: RunWaiting, Config: RunConfig{Stories: "all"},
		Wait: &LimitWait{Since: "2026-01-02T15:00:00Z", Until: "2026-01-02T17:00:10Z", ResetsAt: "2026-01-02T17:00:00Z",
			Reason: monitor.ReasonUsageLimit, Agent: "claude", Unit: "1.1", Step: StepDev}}
	data, err := RenderState(st)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"**Status: waiting**", "**Waiting:** claude", "usage_limit", "2026-01-02 17:00:10 UTC"} {
		if !strings.Contains(text, want) {
			t.Fatalf("document lacks %q:\n%s", want, text)
		}
	}
	back, err := ParseState("doc", data)
	if err != nil || back.Wait == nil || back.Wait.Until != st.Wait.Until {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

// snapshotFiles reads every file under root.
func snapshotFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range listFiles(t, root) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = data
	}
	return out
}

// restoreFiles puts root back as snap had it: files written since are
// rewritten, files made since removed.
func restoreFiles(t *testing.T, root string, snap map[string][]byte) {
	t.Helper()
	for _, p := range listFiles(t, root) {
		if _, ok := snap[p]; !ok {
			_ = os.Remove(p)
		}
	}
	for p, data := range snap {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func listFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOtherStoriesFinishTheirAttemptThenWaitToo(t *testing.T) {
	h := newHarness(t, "1-1", "1-2")
	h.project.retro["1"] = true
	release, settled := make(chan struct{}), make(chan string, 16)
	var waiting atomic.Bool
	var mu sync.Mutex
	var reqs []string
	h.steps.script = func(_ context.Context, r StepRequest) StepResult {
		now := h.clock.Now()
		name := r.Story + "/" + r.Step
		mu.Lock()
		reqs = append(reqs, name)
		mu.Unlock()
		switch {
		case name == "1-1/dev" && r.Attempt == 1:
			return StepResult{FinalState: FinalLimited, Reason: monitor.ReasonUsageLimit, ResetsAt: now.Add(time.Hour)}
		case name == "1-2/dev" && !waiting.Load():
			<-release // 1-2's child runs on while 1-1 waits, then finishes
		case r.Story == "1-2" && waiting.Load():
			settled <- "1-2 started " + r.Step + " during the wait"
		}
		return StepResult{FinalState: FinalCompleted}
	}
	testHookWaitJoined = func() { settled <- "joined" }
	defer func() { testHookWaitJoined = func() {} }()
	var once sync.Once
	h.clock.onSleep = func(time.Duration) {
		once.Do(func() {
			// The wait's first slice: 1-2 is either running dev or at a step
			// start, where it must join the wait rather than start a child.
			waiting.Store(true)
			close(release)
			if got := <-settled; got != "joined" {
				t.Error(got)
			}
			waiting.Store(false)
		})
	}
	o := h.options()
	o.FallbackAgent, o.Parallel, o.Isolate = "", 2, IsolateNone
	if _, err := h.run(context.Background(), o); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !slices.Contains(reqs, "1-2/commit") && !slices.Contains(reqs, "1-2/review") {
		t.Fatalf("requests %v", reqs)
	}
}

func TestMaxWaitComesFromTheFlagElseThePolicyElseSixHours(t *testing.T) {
	pol := DefaultPolicy()
	for _, c := range []struct {
		flag, policy, want time.Duration
	}{{0, 0, DefaultMaxWait}, {0, time.Hour, time.Hour}, {2 * time.Hour, time.Hour, 2 * time.Hour}} {
		pol.MaxWait = c.policy
		cfg := RunConfig{}
		if c.flag > 0 {
			cfg.MaxWait = DurationOf(c.flag)
		}
		got, err := effectivePolicy(pol, cfg)
		e := &Engine{Policy: got, state: &State{Config: cfg}}
		if err != nil || e.maxWait() != c.want {
			t.Errorf("flag %s policy %s: max wait %s (%v), want %s", c.flag, c.policy, e.maxWait(), err, c.want)
		}
	}
}

func TestResumeAfterAUsageLimitEscalationWaitsForTheReset(t *testing.T) {
	h := newLimitHarness(t, 1, "", monitor.ReasonUsageLimit, in(8*time.Hour))
	if _, err := h.runWith(context.Background(), h.options()); !errors.Is(err, ErrEscalated) {
		t.Fatalf("run: %v, want usage_limit", err)
	}
	reset := h.devTimes()[0].Add(8 * time.Hour).Truncate(time.Second)
	h.clock.advance(3 * time.Hour) // the user comes back 5h before the reset
	o := h.options()
	o.Resume = true
	if _, err := h.runWith(context.Background(), o); err != nil {
		t.Fatalf("resume: %v (the max wait counts from the resume)", err)
	}
	if times := h.devTimes(); len(times) != 2 || times[1].Before(reset) {
		t.Fatalf("attempts at %v, want the second after the reset %s", times, reset)
	}
}
