package monitor

import (
	"errors"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testOptions() Options {
	return Options{Timeout: time.Hour, Rechecks: 3, RecheckGrace: 10 * time.Second, IdleDebounce: 3 * time.Second,
		StartTimeout: time.Minute, StuckAfter: 10 * time.Minute, ActiveBytes: 100, ProbeEvery: time.Second}
}

func running() *sessionstate.State {
	return &sessionstate.State{Name: "s", Agent: "sim", Lifecycle: sessionstate.LifecycleStarted, PanePid: 10, AgentPid: 11}
}

func exited(code int) *sessionstate.State {
	st := running()
	st.Lifecycle, st.ExitCode = sessionstate.LifecycleExited, &code
	return st
}

func stamped(turns int) *sessionstate.State {
	st := running()
	st.Completion = &sessionstate.CompletionStamp{At: "x", Turns: turns}
	return st
}

func at(d time.Duration, st *sessionstate.State, size int64) Facts {
	return Facts{Now: t0.Add(d), State: st, OutputSize: size}
}

func wantFinal(t *testing.T, a Action, s FinalState, reason string) {
	t.Helper()
	if a.Kind != ActFinish || a.State != s || a.Reason != reason {
		t.Fatalf("got %+v, want finish %s/%s", a, s, reason)
	}
}

func wantKind(t *testing.T, a Action, k ActionKind) {
	t.Helper()
	if a.Kind != k {
		t.Fatalf("got %+v, want kind %d", a, k)
	}
}

func TestExitStatusDecides(t *testing.T) {
	sig := running()
	sig.Lifecycle, sig.Signal = sessionstate.LifecycleExited, "SIGKILL"
	cases := []struct {
		st     *sessionstate.State
		state  FinalState
		reason string
	}{
		{exited(3), Crashed, "exit_code_3"},
		{exited(137), Crashed, "exit_code_137"},
		{sig, Crashed, "signal_SIGKILL"},
	}
	for _, tc := range cases {
		m := NewMachine(testOptions(), t0)
		wantFinal(t, m.Next(at(0, tc.st, 10)), tc.state, tc.reason)
	}
}

func TestExitZeroIsVerifiedThenCompleted(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, exited(0), 10)), ActVerify)
	m.Verified(Verdict{Verified: true}, t0)
	wantFinal(t, m.Next(at(0, exited(0), 10)), Completed, SignalExit)
	if m.Verifications() != 1 {
		t.Fatalf("verifications %d", m.Verifications())
	}
}

func TestFalseCompletionIsRecheckedExactlyNTimesThenIncomplete(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	now := time.Duration(0)
	wantKind(t, m.Next(at(now, exited(0), 10)), ActVerify)
	for i := 1; i < 3; i++ {
		m.Verified(Verdict{Detail: "missing"}, t0.Add(now))
		a := m.Next(at(now+time.Second, exited(0), 10))
		if a.Kind != ActWait || !a.Until.Equal(t0.Add(now+10*time.Second)) {
			t.Fatalf("recheck %d: want a wait for the grace, got %+v", i, a)
		}
		now += 10 * time.Second
		wantKind(t, m.Next(at(now, exited(0), 10)), ActVerify)
	}
	m.Verified(Verdict{Detail: "missing"}, t0.Add(now))
	wantFinal(t, m.Next(at(now, exited(0), 10)), Incomplete, ReasonNotVerified)
	if m.Verifications() != 3 {
		t.Fatalf("verifications %d, want 3", m.Verifications())
	}
}

func TestLateArtifactCompletesOnARecheck(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, exited(0), 10)), ActVerify)
	m.Verified(Verdict{}, t0)
	wantKind(t, m.Next(at(10*time.Second, exited(0), 10)), ActVerify)
	m.Verified(Verdict{Verified: true}, t0.Add(10*time.Second))
	wantFinal(t, m.Next(at(10*time.Second, exited(0), 10)), Completed, SignalExit)
}

func TestContractErrorIsIncompleteAtOnce(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, stamped(1), 10)), ActVerify)
	m.Verified(Verdict{ContractErr: errors.New("bad")}, t0)
	wantFinal(t, m.Next(at(0, stamped(1), 10)), Incomplete, ReasonContract)
	if m.Verifications() != 1 {
		t.Fatalf("verifications %d", m.Verifications())
	}
}

func TestStopHookStampCompletesWithoutScreen(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, running(), 10)), ActWait)
	wantKind(t, m.Next(at(time.Second, stamped(1), 10)), ActVerify)
	m.Verified(Verdict{Verified: true}, t0)
	wantFinal(t, m.Next(at(time.Second, stamped(1), 10)), Completed, SignalStopHook)
}

func TestRecoveredSessionGetsItsBudgetBack(t *testing.T) {
	opt := testOptions()
	opt.Rechecks = 2
	m := NewMachine(opt, t0)
	wantKind(t, m.Next(at(0, stamped(1), 1000)), ActVerify)
	m.Verified(Verdict{}, t0)
	// The agent works again: lots of new output during the grace.
	wantKind(t, m.Next(at(2*time.Second, stamped(1), 5000)), ActWait)
	// Its next turn ends: a full budget of two verifications, not one.
	wantKind(t, m.Next(at(30*time.Second, stamped(2), 6000)), ActVerify)
	m.Verified(Verdict{}, t0.Add(30*time.Second))
	a := m.Next(at(31*time.Second, stamped(2), 6000))
	if a.Kind != ActWait {
		t.Fatalf("budget not given back: %+v", a)
	}
	wantKind(t, m.Next(at(40*time.Second, stamped(2), 6000)), ActVerify)
	m.Verified(Verdict{}, t0.Add(40*time.Second))
	wantFinal(t, m.Next(at(40*time.Second, stamped(2), 6000)), Incomplete, ReasonNotVerified)
	if m.Verifications() != 3 {
		t.Fatalf("verifications %d, want 3", m.Verifications())
	}
}

func TestSmallRedrawAfterCompletionDoesNotResetBudget(t *testing.T) {
	opt := testOptions()
	opt.Rechecks = 2
	m := NewMachine(opt, t0)
	wantKind(t, m.Next(at(0, stamped(1), 1000)), ActVerify)
	m.Verified(Verdict{}, t0)
	wantKind(t, m.Next(at(10*time.Second, stamped(1), 1050)), ActVerify)
	m.Verified(Verdict{}, t0.Add(10*time.Second))
	wantFinal(t, m.Next(at(10*time.Second, stamped(1), 1050)), Incomplete, ReasonNotVerified)
}

func TestDoneLineIsACompletionSignal(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	f := at(0, running(), 50)
	f.DoneLines = 1
	wantKind(t, m.Next(f), ActVerify)
	m.Verified(Verdict{Verified: true}, t0)
	wantFinal(t, m.Next(f), Completed, SignalDoneLine)
}

func TestScreenIsReadOnlyAfterIdleDebounceAndOncePerOutput(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	f := func(d time.Duration, size int64) Facts {
		x := at(d, running(), size)
		x.ScreenHeuristic = true
		return x
	}
	a := m.Next(f(0, 100))
	if a.Kind != ActWait || !a.Until.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("want a wait for the debounce, got %+v", a)
	}
	wantKind(t, m.Next(f(2*time.Second, 200)), ActWait) // output changed: debounce restarts
	wantKind(t, m.Next(f(4*time.Second, 200)), ActWait)
	wantKind(t, m.Next(f(5*time.Second, 200)), ActProbeScreen)
	m.ScreenProbed(ScreenVerdict{}, 200)
	wantKind(t, m.Next(f(9*time.Second, 200)), ActWait) // not again for the same output
	wantKind(t, m.Next(f(10*time.Second, 300)), ActWait)
	wantKind(t, m.Next(f(13*time.Second, 300)), ActProbeScreen)
	m.ScreenProbed(ScreenVerdict{Done: true}, 300)
	wantKind(t, m.Next(f(13*time.Second, 300)), ActVerify)
	m.Verified(Verdict{Verified: true}, t0)
	wantFinal(t, m.Next(f(13*time.Second, 300)), Completed, SignalScreen)
}

func TestScreenDoneIsStaleOnceOutputMoves(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	x := at(5*time.Second, running(), 300)
	x.ScreenHeuristic = true
	m.observeOutput(at(0, running(), 300))
	m.ScreenProbed(ScreenVerdict{Done: true}, 300)
	x.OutputSize = 400
	wantKind(t, m.Next(x), ActWait)
}

func TestGoneSessions(t *testing.T) {
	killed := running()
	killed.Lifecycle = "killed"
	m := NewMachine(testOptions(), t0)
	wantFinal(t, m.Next(at(0, killed, 10)), NotFound, ReasonSessionGone)

	m = NewMachine(testOptions(), t0)
	f := at(0, running(), 10)
	f.RunnerGone = true
	wantFinal(t, m.Next(f), NotFound, ReasonSessionGone)

	m = NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, nil, 0)), ActProbeSession)
	m.SessionProbed(false, t0)
	wantFinal(t, m.Next(at(0, nil, 0)), NotFound, ReasonNoSuchSession)
}

func TestStampOfAGoneSessionIsStillVerified(t *testing.T) {
	st := stamped(1)
	st.Lifecycle = "killed"
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, st, 10)), ActVerify)
}

// A session just spawned gets a second for its runner to record itself
// (that record wakes the monitor) before tmux is asked about it; then tmux
// is asked at most every second.
func TestSessionNotYetRunningIsProbedAtMostEverySecond(t *testing.T) {
	starting := &sessionstate.State{Name: "s", Lifecycle: "starting"}
	m := NewMachine(testOptions(), t0)
	a := m.Next(at(0, starting, 0))
	if a.Kind != ActWait || !a.Until.Equal(t0.Add(time.Second)) {
		t.Fatalf("a session just spawned: got %+v, want a wait of a second", a)
	}
	wantKind(t, m.Next(at(time.Second, starting, 0)), ActProbeSession)
	m.SessionProbed(true, t0.Add(time.Second))
	a = m.Next(at(1500*time.Millisecond, starting, 0))
	if a.Kind != ActWait || !a.Until.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("got %+v", a)
	}
	wantKind(t, m.Next(at(2*time.Second, starting, 0)), ActProbeSession)

	// One spawned a while ago (a monitor started late) is asked about at once.
	old := &sessionstate.State{Name: "s", Lifecycle: "starting", CreatedAt: marker.Timestamp(t0.Add(-time.Minute))}
	m = NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, old, 0)), ActProbeSession)
}

func starting() *sessionstate.State {
	return &sessionstate.State{Name: "s", Agent: "claude", Lifecycle: "starting", PanePid: 0}
}

func TestNeverStartedIsAnAgentProcessNeverRecorded(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, starting(), 0)), ActWait)
	wantKind(t, m.Next(at(time.Second, starting(), 0)), ActProbeSession)
	m.SessionProbed(true, t0.Add(time.Second))
	wantKind(t, m.Next(at(30*time.Second, starting(), 0)), ActProbeSession)
	m.SessionProbed(true, t0.Add(30*time.Second))
	wantKind(t, m.Next(at(time.Minute, starting(), 0)), ActProbeSession)
	m.SessionProbed(true, t0.Add(time.Minute))
	wantFinal(t, m.Next(at(time.Minute, starting(), 0)), Stuck, ReasonNeverStarted)

	// The runner runs (pane pid recorded) but never recorded an agent process.
	noAgent := running()
	noAgent.AgentPid = 0
	m = NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, noAgent, 0)), ActWait)
	wantFinal(t, m.Next(at(time.Minute, noAgent, 0)), Stuck, ReasonNeverStarted)
}

func TestSilentStartedAgentIsNoProgressNotNeverStarted(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	a := m.Next(at(0, running(), 0))
	if a.Kind != ActWait || !a.Until.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("want a wait for the stuck window, got %+v", a)
	}
	wantKind(t, m.Next(at(time.Minute, running(), 0)), ActWait)
	wantKind(t, m.Next(at(5*time.Minute, running(), 0)), ActWait)
	wantFinal(t, m.Next(at(10*time.Minute, running(), 0)), Stuck, ReasonNoProgress)
}

func TestNoProgressCountsFromTheLastOutputChange(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, running(), 10)), ActWait)
	wantKind(t, m.Next(at(9*time.Minute, running(), 20)), ActWait)
	wantFinal(t, m.Next(at(19*time.Minute, running(), 20)), Stuck, ReasonNoProgress)
}

func TestNeverStartedCountsFromTheSessionsCreation(t *testing.T) {
	st := starting()
	st.CreatedAt = marker.Timestamp(t0.Add(-2 * time.Minute))
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, st, 0)), ActProbeSession)
	m.SessionProbed(true, t0)
	wantFinal(t, m.Next(at(0, st, 0)), Stuck, ReasonNeverStarted)
}

func TestTimeoutAndReturnAfter(t *testing.T) {
	opt := testOptions()
	opt.Timeout = 5 * time.Second
	m := NewMachine(opt, t0)
	a := m.Next(at(0, running(), 10))
	if a.Kind != ActWait || !a.Until.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("got %+v", a)
	}
	wantFinal(t, m.Next(at(5*time.Second, running(), 10)), TimedOut, ReasonTimeout)

	opt.ReturnAfter = 2 * time.Second
	m = NewMachine(opt, t0)
	wantFinal(t, m.Next(at(2*time.Second, running(), 10)), Running, ReasonReturnAfter)
}

func TestExitWinsOverTimeoutAtTheSameLook(t *testing.T) {
	opt := testOptions()
	opt.Timeout = time.Second
	m := NewMachine(opt, t0)
	wantFinal(t, m.Next(at(time.Hour, exited(2), 10)), Crashed, "exit_code_2")
}

func TestFinalStateIsSticky(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	wantFinal(t, m.Next(at(0, exited(1), 10)), Crashed, "exit_code_1")
	wantFinal(t, m.Next(at(0, exited(0), 10)), Crashed, "exit_code_1")
}

func TestExitCodesMatchTheSpec(t *testing.T) {
	want := map[FinalState]int{Completed: 0, Incomplete: 3, Crashed: 4, Stuck: 5, NotFound: 6, TimedOut: 7, Running: 8}
	for s, c := range want {
		if s.ExitCode() != c {
			t.Errorf("%s: %d, want %d", s, s.ExitCode(), c)
		}
	}
}

func TestBrokenVerifierIsConsultedOnceTheSessionIsKnown(t *testing.T) {
	m := NewMachine(testOptions(), t0)
	m.verifyAtOnce = true
	wantKind(t, m.Next(at(0, running(), 0)), ActVerify)
	m.Verified(Verdict{ContractErr: errors.New("bad spec")}, t0)
	wantFinal(t, m.Next(at(0, running(), 0)), Incomplete, ReasonContract)
	if m.Verifications() != 1 {
		t.Fatalf("verifications %d", m.Verifications())
	}

	m = NewMachine(testOptions(), t0)
	m.verifyAtOnce = true
	wantKind(t, m.Next(at(0, nil, 0)), ActProbeSession)
	m.SessionProbed(false, t0)
	wantFinal(t, m.Next(at(0, nil, 0)), NotFound, ReasonNoSuchSession)
	if m.Verifications() != 0 {
		t.Fatalf("a missing session was verified")
	}

	m = NewMachine(testOptions(), t0)
	m.verifyAtOnce = true
	wantFinal(t, m.Next(at(0, exited(3), 0)), Crashed, "exit_code_3")
}

func TestTurnsBeforeTheLastSendAreNotCompletions(t *testing.T) {
	sent := func(turns int) *sessionstate.State {
		st := stamped(turns)
		st.SendBaseline = &sessionstate.SendBaseline{Turns: 1, OutputOffset: 10}
		return st
	}
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(at(0, sent(1), 10)), ActWait)
	wantKind(t, m.Next(at(time.Second, sent(1), 200)), ActWait)
	wantKind(t, m.Next(at(2*time.Second, sent(2), 300)), ActVerify)
	m.Verified(Verdict{Verified: true}, t0.Add(2*time.Second))
	wantFinal(t, m.Next(at(2*time.Second, sent(2), 300)), Completed, SignalStopHook)
}

func TestScreenIsNotReadBeforeOutputFollowsTheLastSend(t *testing.T) {
	st := running()
	st.SendBaseline = &sessionstate.SendBaseline{OutputOffset: 100}
	f := func(d time.Duration, size int64) Facts {
		x := at(d, st, size)
		x.ScreenHeuristic = true
		return x
	}
	m := NewMachine(testOptions(), t0)
	wantKind(t, m.Next(f(0, 100)), ActWait)
	wantKind(t, m.Next(f(10*time.Second, 100)), ActWait)
	wantKind(t, m.Next(f(11*time.Second, 150)), ActWait)
	wantKind(t, m.Next(f(15*time.Second, 150)), ActProbeScreen)
}
