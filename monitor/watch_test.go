package monitor

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/story-automator/story-automator/sessionstate"
)

// fakeTmux answers the monitor's two tmux questions from fields.
type fakeTmux struct {
	exists   bool
	screen   string
	captures int
	keys     []string
	onKey    func(f *fakeTmux, key string)
}

func (f *fakeTmux) HasSession(context.Context, string) (bool, error) { return f.exists, nil }
func (f *fakeTmux) CapturePane(context.Context, string, int) (string, error) {
	f.captures++
	return f.screen, nil
}

func (f *fakeTmux) SendKey(_ context.Context, _, key string) error {
	f.keys = append(f.keys, key)
	if f.onKey != nil {
		f.onKey(f, key)
	}
	return nil
}

func fakeDeps(t *testing.T, tm *fakeTmux, gone bool) Deps {
	return Deps{Tmux: tm, StateDir: t.TempDir(), Tick: 10 * time.Millisecond, NoEvents: true,
		ProcessGone: func(int) bool { return gone }}
}

func writeSession(t *testing.T, d Deps, name string, fn func(*sessionstate.State), output string) {
	t.Helper()
	if _, err := sessionstate.Update(d.StateDir, name, func(st *sessionstate.State) error { fn(st); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sessionstate.OutputPath(d.StateDir, name), []byte(output), 0o600); err != nil {
		t.Fatal(err)
	}
}

func quickOptions() Options {
	o := DefaultOptions()
	o.Timeout, o.IdleDebounce, o.RecheckGrace = 5*time.Second, 20*time.Millisecond, 10*time.Millisecond
	return o
}

func TestWatchCompletesFromTheScreenOfARunningClaude(t *testing.T) {
	screen, err := os.ReadFile("testdata/claude/done-worked-seconds.txt")
	if err != nil {
		t.Fatal(err)
	}
	tm := &fakeTmux{exists: true, screen: string(screen)}
	d := fakeDeps(t, tm, false)
	writeSession(t, d, "sa-c", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid = "claude", sessionstate.LifecycleStarted, os.Getpid()
	}, "some output")
	r := Watch(context.Background(), "sa-c", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Completed || r.Reason != SignalScreen || r.ExitCode != nil || tm.captures != 1 {
		t.Fatalf("%+v after %d captures", r, tm.captures)
	}
}

func TestWatchNeverReadsTheScreenOfAnAgentWithoutHeuristic(t *testing.T) {
	tm := &fakeTmux{exists: true, screen: "✻ Worked for 1s\n> \n"}
	d := fakeDeps(t, tm, false)
	writeSession(t, d, "sa-x", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid = "codex", sessionstate.LifecycleStarted, os.Getpid()
	}, "working")
	o := quickOptions()
	o.Timeout = 200 * time.Millisecond
	r := Watch(context.Background(), "sa-x", noneVerifier{}, o, d)
	if r.FinalState != TimedOut || tm.captures != 0 {
		t.Fatalf("%+v after %d captures", r, tm.captures)
	}
}

func TestWatchRunnerGoneWithoutResultIsNotFound(t *testing.T) {
	d := fakeDeps(t, &fakeTmux{}, true)
	writeSession(t, d, "sa-g", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid = "sim", sessionstate.LifecycleStarted, 999999
	}, "x")
	r := Watch(context.Background(), "sa-g", noneVerifier{}, quickOptions(), d)
	if r.FinalState != NotFound || r.Reason != ReasonSessionGone {
		t.Fatalf("%+v", r)
	}
}

func TestWatchDoneLineInTheOutputFile(t *testing.T) {
	d := fakeDeps(t, &fakeTmux{exists: true}, false)
	writeSession(t, d, "sa-d", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid = "codex", sessionstate.LifecycleStarted, os.Getpid()
	}, "working\r\n\x1b[1mSTORY_AUTOMATOR_DONE\x1b[0m\r\n")
	r := Watch(context.Background(), "sa-d", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Completed || r.Reason != SignalDoneLine || r.Rechecks != 1 {
		t.Fatalf("%+v", r)
	}
}

func TestWatchWakesOnTheStateFileWithoutWaitingForATick(t *testing.T) {
	d := fakeDeps(t, &fakeTmux{exists: true}, false)
	d.NoEvents, d.Tick = false, time.Hour
	looked := make(chan struct{})
	var once sync.Once
	d.ProcessGone = func(int) bool { once.Do(func() { close(looked) }); return false }
	writeSession(t, d, "sa-w", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid = "codex", sessionstate.LifecycleStarted, os.Getpid()
	}, "working")
	done := make(chan Result)
	go func() { done <- Watch(context.Background(), "sa-w", noneVerifier{}, quickOptions(), d) }()
	// After the first look the loop sleeps: only the kernel's wake-up, never
	// the hour-long tick, can wake it before the 5 s timeout.
	<-looked
	if _, err := sessionstate.StampCompletion(d.StateDir, "sa-w", time.Now(), "done"); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.FinalState != Completed || r.Reason != SignalStopHook {
		t.Fatalf("%+v", r)
	}
}

// A silent agent, started or still starting, must not make the loop spin:
// it sleeps until its next deadline (here the timeout), so it looks only a
// handful of times. Counting clock reads counts the loop's turns.
func TestWatchOfASilentAgentSleepsUntilItsDeadline(t *testing.T) {
	for _, tc := range []struct {
		name string
		fill func(st *sessionstate.State)
	}{
		{"started", func(st *sessionstate.State) {
			st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = "claude", sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
		}},
		{"starting", func(st *sessionstate.State) { st.Agent, st.Lifecycle = "claude", "starting" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := &fakeTmux{exists: true}
			d := fakeDeps(t, tm, false)
			d.Tick = time.Hour
			var clockReads atomic.Int64
			d.Now = func() time.Time { clockReads.Add(1); return time.Now() }
			writeSession(t, d, "sa-s", tc.fill, "")
			o := quickOptions()
			o.Timeout = 300 * time.Millisecond
			r := Watch(context.Background(), "sa-s", noneVerifier{}, o, d)
			if r.FinalState != TimedOut || tm.captures != 0 {
				t.Fatalf("%+v after %d captures", r, tm.captures)
			}
			if n := clockReads.Load(); n > 20 {
				t.Fatalf("the loop turned %d times in 300 ms on a silent agent: it spins", n)
			}
		})
	}
}

func TestWatchCountsOnlyDoneLinesAfterTheLastSend(t *testing.T) {
	d := fakeDeps(t, &fakeTmux{exists: true}, false)
	before := "working\r\nSTORY_AUTOMATOR_DONE\r\n"
	writeSession(t, d, "sa-b", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = "codex", sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
		st.SendBaseline = &sessionstate.SendBaseline{OutputOffset: int64(len(before))}
	}, before)
	o := quickOptions()
	o.Timeout = 300 * time.Millisecond
	if r := Watch(context.Background(), "sa-b", noneVerifier{}, o, d); r.FinalState != TimedOut {
		t.Fatalf("the done line before the send counted: %+v", r)
	}
	f, err := os.OpenFile(sessionstate.OutputPath(d.StateDir, "sa-b"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("next turn\r\nSTORY_AUTOMATOR_DONE\r\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r := Watch(context.Background(), "sa-b", noneVerifier{}, o, d); r.FinalState != Completed || r.Reason != SignalDoneLine {
		t.Fatalf("the new done line was missed: %+v", r)
	}
}

func TestWatchConsultsABrokenVerifierOnceTheSessionExists(t *testing.T) {
	d := fakeDeps(t, &fakeTmux{exists: false}, false)
	writeSession(t, d, "sa-v", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = "codex", sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
	}, "working")
	v := ContractFailure("glob:[", errors.New("bad pattern"))
	r := Watch(context.Background(), "sa-v", v, quickOptions(), d)
	if r.FinalState != Incomplete || r.Reason != ReasonContract || r.Rechecks != 1 || r.Verifier.Attempts != 1 || r.Verifier.Detail != "bad pattern" {
		t.Fatalf("%+v", r)
	}
	r = Watch(context.Background(), "sa-missing", v, quickOptions(), d)
	if r.FinalState != NotFound || r.Reason != ReasonNoSuchSession || r.Rechecks != 0 {
		t.Fatalf("%+v", r)
	}
}

// A look reads the state file again only when it was replaced, and then
// always, even when the new one has the same size and time.
func TestLookReadsTheStateAgainOnlyWhenItWasReplaced(t *testing.T) {
	d := fakeDeps(t, &fakeTmux{exists: true}, false)
	writeSession(t, d, "sa-r", func(st *sessionstate.State) { st.Agent, st.Lifecycle = "sim", "aaaaaaa" }, "")
	o := &observer{dir: d.StateDir, name: "sa-r", gone: func(int) bool { return false }}
	first := o.readState()
	if first == nil || first.Lifecycle != "aaaaaaa" {
		t.Fatalf("%+v", first)
	}
	if again := o.readState(); again != first {
		t.Fatal("an unchanged state file was read and decoded again")
	}
	path := sessionstate.StatePath(d.StateDir, "sa-r")
	old, _ := os.Stat(path)
	writeSession(t, d, "sa-r", func(st *sessionstate.State) { st.Lifecycle = "bbbbbbb" }, "")
	// The same size, and the same modification time as far as a look can tell.
	if err := os.Chtimes(path, old.ModTime(), old.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := o.readState(); got.Lifecycle != "bbbbbbb" {
		t.Fatalf("the replaced state file was not read: %q", got.Lifecycle)
	}
}
