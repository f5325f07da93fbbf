package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/workflows"
)

func TestSessionAndMonitorUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"session", "spawn", "--story", "1.2", "--agent", "sim"},
		{"session", "spawn", "--step", "dev", "--agent", "sim"},
		{"session", "spawn", "--step", "dev", "--story", "1.2"},
		{"session", "spawn", "--step", "dev", "--story", "1.2", "--agent", "robot"},
		{"session", "spawn", "--step", "dev", "--story", "1.2", "--agent", "custom"},
		{"session", "spawn", "--step", "dev", "--story", "1.2", "--agent", "sim", "--command", "x"},
		{"session", "spawn", "--step", "dev", "--story", "1.2", "--agent", "sim", "--prompt", "a", "--prompt-file", "f"},
		{"session", "spawn", "--step", "dev", "--story", "1.2", "--agent", "sim", "--cycle", "-1"},
		{"session", "kill-all"},
		{"session", "kill-all", "--project-only", "--all-projects"},
		{"session", "kill"},
		{"session", "kill", "a;b"},
		{"session", "capture", "x", "--lines", "-1"},
		{"session", "send", "x"},
		{"monitor-session"},
		{"monitor-session", "x", "y"},
		{"monitor-session", "bad name"},
		{"monitor-session", "x", "--timeout", "soon"},
		{"monitor-session", "x", "--timeout", "0s"},
		{"monitor-session", "x", "--completion-rechecks", "0"},
		{"monitor-session", "x", "--recheck-grace", "-1s"},
		{"monitor-session", "x", "--verify", "none", "--workflow", "dev"},
		{"monitor-session", "x", "--story-key", "1.2"},
	} {
		var out, errb bytes.Buffer
		s := testStreams(t.TempDir(), &out)
		s.Err = &errb
		code := Run(append([]string{"--tmux-socket", "sa-test-never-started"}, args...), s)
		var res map[string]any
		if code != 2 || json.Unmarshal(out.Bytes(), &res) != nil || res["error"] != "usage_error" || errb.Len() == 0 {
			t.Errorf("%q: code %d stdout %q stderr %q", args, code, out.String(), errb.String())
		}
	}
}

// writeState records a session's state as the runner would have left it.
func writeState(t *testing.T, root, name string, fn func(st *sessionstate.State)) {
	t.Helper()
	dir := sessionstate.Dir(root, func(string) string { return "" })
	if _, err := sessionstate.Update(dir, name, func(st *sessionstate.State) error { fn(st); return nil }); err != nil {
		t.Fatal(err)
	}
}

func monitorInProcess(t *testing.T, root string, args ...string) (monitor.Result, int) {
	t.Helper()
	var out bytes.Buffer
	code := Run(append([]string{"--tmux-socket", "sa-test-never-started", "monitor-session"}, args...), testStreams(root, &out))
	var r monitor.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %q", args, out.String())
	}
	return r, code
}

func TestMonitorReadsARecordedExitWithoutTmux(t *testing.T) {
	root := t.TempDir()
	writeState(t, root, "sa-done", func(st *sessionstate.State) {
		zero := 0
		st.Agent, st.Lifecycle, st.ExitCode = "sim", sessionstate.LifecycleExited, &zero
	})
	writeState(t, root, "sa-failed", func(st *sessionstate.State) {
		five := 5
		st.Agent, st.Lifecycle, st.ExitCode = "sim", sessionstate.LifecycleExited, &five
	})
	r, code := monitorInProcess(t, root, "sa-done", "--json")
	if code != 0 || r.FinalState != monitor.Completed || r.Reason != monitor.SignalExit || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("%d %+v", code, r)
	}
	// Flags after the name work as well (SPEC §2).
	r, code = monitorInProcess(t, root, "sa-failed", "--timeout", "5s")
	if code != 4 || r.FinalState != monitor.Crashed || r.Reason != "exit_code_5" {
		t.Fatalf("%d %+v", code, r)
	}
}

// runningSession records a session whose runner (this test process) is alive.
func runningSession(t *testing.T, root, name string) {
	writeState(t, root, name, func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = "codex", sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
	})
}

func TestMonitorWorkflowWithoutVerifiersIsAContractError(t *testing.T) {
	saved := workflowVerifier
	workflowVerifier = nil
	defer func() { workflowVerifier = saved }()
	root := t.TempDir()
	runningSession(t, root, "sa-any")
	r, code := monitorInProcess(t, root, "sa-any", "--workflow", "dev", "--story-key", "1.2")
	if code != 3 || r.FinalState != monitor.Incomplete || r.Reason != monitor.ReasonContract ||
		r.Rechecks != 1 || !strings.Contains(r.Verifier.Detail, "unavailable") || r.Verifier.Name != "workflow:dev" {
		t.Fatalf("%d %+v", code, r)
	}
}

func TestMonitorBadVerifySpecIsIncompleteAtOnce(t *testing.T) {
	root := t.TempDir()
	runningSession(t, root, "sa-any")
	r, code := monitorInProcess(t, root, "sa-any", "--verify", "smell:good")
	if code != 3 || r.FinalState != monitor.Incomplete || r.Reason != monitor.ReasonContract || r.Rechecks != 1 || r.Verifier.Attempts != 1 {
		t.Fatalf("%d %+v", code, r)
	}
	// A bad verifier does not hide that the session does not exist.
	r, code = monitorInProcess(t, root, "sa-none", "--verify", "smell:good")
	if code != 6 || r.FinalState != monitor.NotFound || r.Rechecks != 0 {
		t.Fatalf("%d %+v", code, r)
	}
}

// --workflow without --story-key verifies the story the session was spawned
// for, as its state file records it (the skill's Way 2 passes the step only).
func TestMonitorWorkflowTakesTheStoryFromTheSession(t *testing.T) {
	saved := workflowVerifier
	var gotStory string
	workflowVerifier = func(root, step, story string) (workflows.Check, error) {
		gotStory = story
		return nil, errors.New("stop here")
	}
	defer func() { workflowVerifier = saved }()
	root := t.TempDir()
	writeState(t, root, "sa-s", func(st *sessionstate.State) {
		zero := 0
		st.Agent, st.Lifecycle, st.ExitCode, st.Story = "sim", sessionstate.LifecycleExited, &zero, "1.3"
	})
	monitorInProcess(t, root, "sa-s", "--workflow", "dev")
	if gotStory != "1.3" {
		t.Fatalf("the workflow verifier was asked about story %q, want the session's 1.3", gotStory)
	}
	monitorInProcess(t, root, "sa-s", "--workflow", "dev", "--story-key", "1.4")
	if gotStory != "1.4" {
		t.Fatalf("--story-key %q did not win", gotStory)
	}
}
