package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// hooks install, then an interactive Claude Code session in tmux runs
// `loop start --max-iterations 3` from its own Bash tool: the loop runs
// exactly three iterations (the start and two re-injections) and ends, and a
// second Claude session in the same project is never blocked.
func TestRealClaudeLoopRunsExactlyTheAskedIterations(t *testing.T) {
	t.Parallel()
	claude := realagent.Require(t, "claude")
	bin := builtBinary(t)
	script := tickLoopScript(bin) + `  - match: "say hello"
    actions:
      - reply: "Hello."
`
	srv := startModelSim(t, script)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	run := func(args ...string) {
		c := exec.Command(args[0], args[1:]...)
		c.Dir, c.Env = root, cleanEnv("PROJECT_ROOT="+root)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	run("git", "init", "-q")
	run(bin, "hooks", "install", "--scope", "project", "--force")
	home := realHome(t)
	oenv, err := offline.Claude(offline.Config{Home: home, BaseURL: srv.URL(), Trusted: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	socket := tmuxtest.Socket(t)
	t.Cleanup(func() { shutdownWaitingForPanes(socket) })
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(claude)+":"+os.Getenv("PATH"), "PROJECT_ROOT="+root)
	start := func(name, prompt string) {
		args := []string{"-L", socket, "new-session", "-d", "-s", name, "-x", "160", "-y", "40", "-c", root, "--", "env"}
		args = append(append(args, env...), claude, "--dangerously-skip-permissions", prompt)
		c := exec.Command("tmux", args...)
		c.Env = cleanEnv()
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("tmux: %v\n%s", err, out)
		}
	}
	start("owner", "Please start the tick loop.")
	history := filepath.Join(root, ".claude", "story-automator.history.jsonl")
	decisions := waitForLoopEnd(t, history)
	if got := strings.Join(decisions, ","); got != "continue,continue,max-iterations" && got != "block,block,max-iterations" {
		t.Fatalf("loop decisions %q, want two re-injections then max-iterations", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "ticks.txt")); strings.Count(string(b), "tick") != 2 {
		t.Fatalf("ticks.txt = %q, want the two re-injected iterations", b)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude", ".story-automator-active")); !os.IsNotExist(err) {
		t.Fatalf("the loop's marker is still there: %v", err)
	}
	// A bystander Claude session, while a loop of another session is active,
	// stops at once: start a new loop owned by the first session, then the bystander.
	run(bin, "loop", "start", "add one tick to ticks.txt", "--max-iterations", "5", "--owner-session", "some-other-session")
	before := len(readDecisions(history))
	start("bystander", "Please say hello.")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(capturePane(socket, "bystander"), "Hello.") {
		if time.Now().After(deadline) {
			t.Fatalf("the bystander never answered:\n%s", capturePane(socket, "bystander"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Its Stop hook has run once its transcript records it after the answer
	// (it must write nothing).
	for deadline := time.Now().Add(60 * time.Second); !stopHookRanAfter(claudeTranscriptWith(home, "Please say hello."), "Hello."); {
		if time.Now().After(deadline) {
			t.Fatalf("the bystander's Stop hook never ran after its answer (transcript %q)", claudeTranscriptWith(home, "Please say hello."))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if after := readDecisions(history); len(after) != before {
		t.Fatalf("the bystander's stop was decided on: %v", after[before:])
	}
	if b, _ := os.ReadFile(filepath.Join(root, "ticks.txt")); strings.Count(string(b), "tick") != 2 {
		t.Fatalf("the bystander was made to work the loop: ticks.txt = %q", b)
	}
	m, err := marker.NewStore(root, func(string) string { return "" }).Read()
	if err != nil || m.Loop == nil || m.Loop.Iteration != 1 {
		t.Fatalf("the other session's loop moved: %+v %v", m, err)
	}
}

func capturePane(socket, name string) string {
	out, err := exec.Command("tmux", "-L", socket, "capture-pane", "-p", "-t", "="+name+":").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, out)
	}
	return string(out)
}

func readDecisions(history string) []string {
	f, err := os.Open(history)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct{ Decision string }
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out = append(out, l.Decision)
		}
	}
	return out
}

// waitForLoopEnd waits (an external process's progress) for the loop's final decision.
func waitForLoopEnd(t *testing.T, history string) []string {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		d := readDecisions(history)
		if n := len(d); n > 0 && d[n-1] != "continue" && d[n-1] != "block" {
			return d
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the loop did not end; history %v", readDecisions(history))
	return nil
}

// shutdownWaitingForPanes kills the server and waits for its panes' processes
// (Claude Code writes its home as it exits) before the temp dirs go.
func shutdownWaitingForPanes(socket string) {
	out, _ := exec.Command("tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_pid}").Output()
	tmuxtest.Shutdown(socket)
	for _, f := range strings.Fields(string(out)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err != nil || pid <= 0 {
			continue
		}
		for deadline := time.Now().Add(10 * time.Second); proc.Alive(pid) && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	}
}
