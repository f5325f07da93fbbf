package monitor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/testbin"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/stophook"
)

func sim(behaviour string, more ...string) []string {
	return append([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=" + behaviour}, more...)
}

func TestE2EFinishedAgentIsCompleted(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.spawnSim(sim("finish", "STORY_AUTOMATOR_SIM_ARTIFACT="+filepath.Join(p.root, "done.txt")))
	r, code := p.monitor(name, "--timeout", "30s", "--verify", "glob:done.txt")
	wantResult(t, r, code, monitor.Completed, monitor.SignalExit)
	if r.ExitCode == nil || *r.ExitCode != 0 || !r.OutputVerified || r.Rechecks != 1 || r.Verifier.Name != "glob:done.txt" {
		t.Fatalf("%+v", r)
	}
	if !strings.HasSuffix(r.OutputFile, name+".log") {
		t.Fatalf("output file %q", r.OutputFile)
	}
	out, err := os.ReadFile(r.OutputFile)
	if err != nil || !strings.Contains(string(out), "agent-sim: finished") {
		t.Fatalf("output %q %v", out, err)
	}
}

// The cases that need only a child (or none), one monitor call and its result.
func TestE2EOneMonitorCallEndsInItsState(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, behaviour string
		env             []string // the sim agent's, after its behaviour
		args            []string // monitor-session's, after the session name
		state           monitor.FinalState
		reason          string
	}{
		{"death by a signal is crashed", "signal", []string{"STORY_AUTOMATOR_SIM_SIGNAL=KILL"}, nil, monitor.Crashed, "signal_SIGKILL"},
		{"--return-after says running", "hang", nil, []string{"--return-after", "500ms"}, monitor.Running, monitor.ReasonReturnAfter},
		// A debounce of an hour rules the screen heuristic out.
		{"an explicit done line completes", "done-line", nil, []string{"--idle-debounce", "1h"}, monitor.Completed, monitor.SignalDoneLine},
		{"an unknown session is not found", "", nil, nil, monitor.NotFound, monitor.ReasonNoSuchSession},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			name := "sa-nothing-here"
			if tc.behaviour != "" {
				name = p.spawnSim(sim(tc.behaviour, tc.env...))
			}
			r, code := p.monitor(name, append([]string{"--timeout", "30s"}, tc.args...)...)
			wantResult(t, r, code, tc.state, tc.reason)
		})
	}
}

func TestE2EExitCodeThreeIsCrashed(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.spawnSim(sim("fail", "STORY_AUTOMATOR_SIM_EXIT_CODE=3"))
	r, code := p.monitor(name, "--timeout", "30s")
	wantResult(t, r, code, monitor.Crashed, "exit_code_3")
	if r.ExitCode == nil || *r.ExitCode != 3 {
		t.Fatalf("exitCode %v", r.ExitCode)
	}
}

func TestE2ENeverStartedIsStuck(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.stalledSession()
	r, code := p.monitor(name, "--timeout", "30s", "--start-timeout", "1s")
	wantResult(t, r, code, monitor.Stuck, monitor.ReasonNeverStarted)
}

func TestE2ESilentStartedAgentIsStuckWithoutProgress(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.runningSim("silent")
	// The start timeout passes first: a started agent must not be called never-started.
	r, code := p.monitor(name, "--timeout", "30s", "--start-timeout", "300ms", "--stuck-after", "1500ms")
	wantResult(t, r, code, monitor.Stuck, monitor.ReasonNoProgress)
}

func TestE2EHangingAgentTimesOut(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.spawnSim(sim("hang"))
	r, code := p.monitor(name, "--timeout", "1s")
	wantResult(t, r, code, monitor.TimedOut, monitor.ReasonTimeout)
	if r.ExitCode != nil {
		t.Fatalf("a running agent has no exit code: %v", *r.ExitCode)
	}
}

func TestE2EArtifactAfterTheFirstVerificationCompletesOnARecheck(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.spawnSim(sim("late-artifact", "STORY_AUTOMATOR_SIM_ARTIFACT="+filepath.Join(p.root, "late.txt"),
		"STORY_AUTOMATOR_SIM_DELAY=3s"))
	r, code := p.monitor(name, "--timeout", "30s", "--verify", "glob:late.txt", "--completion-rechecks", "60", "--recheck-grace", "250ms")
	wantResult(t, r, code, monitor.Completed, monitor.SignalExit)
	if r.Rechecks < 2 || !r.OutputVerified {
		t.Fatalf("completed without a recheck: %+v", r)
	}
}

func TestE2EMissingArtifactIsIncompleteAfterExactlyNVerifications(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.spawnSim(sim("finish"))
	r, code := p.monitor(name, "--timeout", "30s", "--completion-rechecks", "4", "--recheck-grace", "100ms",
		"--verify", "cmd:echo attempt >> verifications.log; test -f never.txt")
	wantResult(t, r, code, monitor.Incomplete, monitor.ReasonNotVerified)
	log, err := os.ReadFile(filepath.Join(p.root, "verifications.log"))
	if err != nil || strings.Count(string(log), "attempt") != 4 || r.Rechecks != 4 || r.Verifier.Attempts != 4 {
		t.Fatalf("verifications: %q %v, result %+v", log, err, r)
	}
}

func TestE2EInvalidVerifierContractIsIncompleteAfterOne(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.spawnSim(sim("hang"))
	for _, spec := range []string{"bogus:thing", "glob:[", "cmd:"} {
		r, code := p.monitor(name, "--timeout", "30s", "--verify", spec)
		wantResult(t, r, code, monitor.Incomplete, monitor.ReasonContract)
		if r.Rechecks != 1 || r.Verifier.Attempts != 1 || r.Verifier.Detail == "" || r.Verifier.Name != spec {
			t.Fatalf("%s: %+v", spec, r)
		}
	}
	// The monitor still looks at the session: a broken verifier does not hide a missing one.
	r, code := p.monitor(name+"x", "--timeout", "30s", "--verify", "glob:[")
	wantResult(t, r, code, monitor.NotFound, monitor.ReasonNoSuchSession)
	if r.Rechecks != 0 {
		t.Fatalf("a missing session was verified: %+v", r)
	}
}

func TestE2ESessionKilledFromOutsideIsNotFound(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.runningSim("hang")
	wait := p.startMonitor(name, "--timeout", "30s")
	if res, code := p.run(nil, "session", "kill", name); code != 0 || res["killed"] != true {
		t.Fatalf("kill: %d %v", code, res)
	}
	r, code := wait()
	wantResult(t, r, code, monitor.NotFound, monitor.ReasonSessionGone)
}

func TestE2ETmuxServerKilledMidWaitEndsWithAFinalState(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.runningSim("hang")
	wait := p.startMonitor(name, "--timeout", "60s")
	kill := newTmux(p.socket)
	killedAt := time.Now()
	if err := kill(); err != nil {
		t.Fatal(err)
	}
	r, code := wait()
	sinceKill := time.Since(killedAt)
	// not_found, not timeout: the monitor noticed, it did not wait out its minute.
	wantResult(t, r, code, monitor.NotFound, monitor.ReasonSessionGone)
	// The bound is a final state within a second of the kill. This is
	// a correctness bound (noticed, not waited out), not a speed figure; 2 s
	// leaves room for a loaded 2-core CI running these tests in parallel,
	// where the runner's exit record and the monitor's wake-up are typically
	// tens of milliseconds (see BenchmarkDetectionLatency).
	if sinceKill >= 2*time.Second {
		t.Fatalf("final state %.2fs after the tmux server was killed", sinceKill.Seconds())
	}
}

func TestE2EClaudeScreenCompletesViaHeuristics(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.spawnSim(sim("claude-screen", "STORY_AUTOMATOR_SIM_DELAY=300ms"))
	r, code := p.monitor(name, "--timeout", "30s", "--idle-debounce", "300ms")
	wantResult(t, r, code, monitor.Completed, monitor.SignalScreen)
	if r.ExitCode != nil {
		t.Fatal("the Claude-like agent is still running; no exit code expected")
	}
}

// The child's Stop hook runs story-automator-hook, built beside the binary
// (testbin), as a child's settings name it (stophook.Program).
func TestE2EChildStopHookStampCompletesWithoutScreenHeuristics(t *testing.T) {
	t.Parallel()
	if got := stophook.Program(builtBinary(t)); len(got) != 1 || got[0] != testbin.HookPath(t) {
		t.Fatalf("the hook runs as %q, not the hook binary", got)
	}
	p := newProject(t)
	name := p.spawnSim(sim("stop-hook"))
	// A debounce of an hour rules the screen heuristic out.
	r, code := p.monitor(name, "--timeout", "30s", "--idle-debounce", "1h")
	wantResult(t, r, code, monitor.Completed, monitor.SignalStopHook)
	st, err := sessionstate.Read(p.stateDir(), name)
	if err != nil || st.Completion == nil || st.Completion.Turns != 1 || st.Completion.Excerpt == "" {
		t.Fatalf("stamp %+v %v", st, err)
	}
}

func TestE2EMonitorAfterASendWaitsForTheNewTurn(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	name := p.spawnSim(sim("stop-hook", "STORY_AUTOMATOR_SIM_DELAY=1500ms"))
	r, code := p.monitor(name, "--timeout", "30s", "--idle-debounce", "1h")
	wantResult(t, r, code, monitor.Completed, monitor.SignalStopHook)
	if res, code := p.run(nil, "session", "send", name, "--text", "now the tests, please"); code != 0 || res["delivered"] != true {
		t.Fatalf("send: %d %v", code, res)
	}
	// The first turn's stamp is still in the state file: only the second may complete this call.
	r, code = p.monitor(name, "--timeout", "30s", "--idle-debounce", "1h")
	wantResult(t, r, code, monitor.Completed, monitor.SignalStopHook)
	st, err := sessionstate.Read(p.stateDir(), name)
	if err != nil || st.Completion == nil || st.Completion.Turns != 2 || st.SendBaseline == nil || st.SendBaseline.Turns != 1 {
		t.Fatalf("completed before the new turn ended: state %+v %v", st, err)
	}
}
