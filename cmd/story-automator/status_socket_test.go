package main

import (
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// recordedRun rewrites pausedRun's document as a run that was running on
// socket when its process went away (nobody holds the run lock).
func recordedRun(t *testing.T, root, socket string) {
	t.Helper()
	path := pausedRun(t, root)
	st, err := orchestrator.LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Status, st.Escalation, st.Config.TmuxSocket = orchestrator.RunRunning, nil, socket
	if err := orchestrator.SaveState(path, st); err != nil {
		t.Fatal(err)
	}
}

// With no --tmux-socket, status counts the live sessions on the socket the
// run recorded (not the default server's), and a running run whose process
// is gone is interrupted, with the command that resumes it, in status and runs.
func TestStatusUsesTheRunsSocketAndCallsADeadRunInterrupted(t *testing.T) {
	p := newSessionProject(t, tmuxtest.Socket(t))
	recordedRun(t, p.root, p.socket)
	name := p.spawn(nil, "--agent", "custom", "--command", "sleep 60 {prompt}", "--prompt", "1")
	noSocket := []string{"STORY_AUTOMATOR_TMUX_SOCKET="}

	res, code := p.run(noSocket, "status", "--json")
	list, _ := res["sessions"].([]any)
	if code != 0 || len(list) != 1 || list[0].(map[string]any)["session"] != name {
		t.Fatalf("exit %d: status lists %v, want %s from the run's socket %s", code, list, name, p.socket)
	}
	run, _ := res["run"].(map[string]any)
	if run["status"] != orchestrator.RunInterrupted || run["resume"] != orchestrator.ResumeCommand || run["tmuxSocket"] != p.socket {
		t.Fatalf("run %v: want interrupted with %q on %s", run, orchestrator.ResumeCommand, p.socket)
	}

	res, code = p.run(noSocket, "runs", "--json")
	runs, _ := res["runs"].([]any)
	if code != 0 || len(runs) != 1 || runs[0].(map[string]any)["outcome"] != orchestrator.RunInterrupted {
		t.Fatalf("exit %d: runs %v, want the one run interrupted", code, runs)
	}

	res, code = p.run(noSocket, "status", "--wait", "--json")
	if code != 4 || res["next"] != orchestrator.ResumeCommand {
		t.Fatalf("exit %d: status --wait %v, want dead (4) and the resume command", code, res)
	}
}
