package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/sessionstate"
)

// GitHub Copilot CLI (copilot -p) against model-sim: a child that writes a
// file is seen completed through the agentStop hook its own plugin folder
// registers (no settings file of the user's edited), inside this tool's
// bubblewrap (the default). How long after model-sim's last answer the hook
// stamped the turn and the monitor knew is logged, never asserted.
func TestRealCopilotChildIsSeenCompletedByItsOwnAgentStopHook(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "copilot", offline.Copilot, proofScript, offline.Dialogs{})
	name := p.spawn(p.env, "--agent", "copilot", "--prompt", "Please write the proof file.")
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "90s")
	knew := time.Now()
	if code != 0 || res["finalState"] != "completed" || res["reason"] != "stop_hook" {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, tail(string(out), 3000))
	}
	if b, err := os.ReadFile(filepath.Join(p.root, "proof.txt")); err != nil || string(b) != "proof\n" {
		t.Fatalf("proof.txt = %q, %v", b, err)
	}
	st, err := sessionstate.Read(p.sessionsDir, name)
	if err != nil || st.Completion == nil || !strings.HasSuffix(st.Transcript, "/events.jsonl") {
		t.Fatalf("the agentStop hook left no stamp naming the event log: %+v %v", st, err)
	}
	ex := p.srv.Exchanges()
	if len(ex) == 0 {
		t.Fatal("model-sim was never asked")
	}
	last := ex[len(ex)-1].At
	stamped, _ := time.Parse(time.RFC3339Nano, st.Completion.At)
	t.Logf("copilot: last answer %s; agentStop stamped the turn %.3fs later, the monitor knew %.3fs later",
		last.UTC().Format(time.RFC3339Nano), stamped.Sub(last).Seconds(), knew.Sub(last).Seconds())
	logModelRoute(t, "copilot", p.sessionsDir, name)
	for _, f := range []string{"settings.json", "hooks"} {
		if _, err := os.Stat(filepath.Join(p.home, ".copilot", f)); !os.IsNotExist(err) {
			t.Fatalf("the user's Copilot home was edited: %s (%v)", f, err)
		}
	}
}

// `run --agent copilot`: two stories of the five-step sample pipeline, each
// step a real Copilot CLI child (confined, the default) doing its work
// through its own shell tool; one commit a story, and the usage read from
// each child's events.jsonl equals what model-sim answered, token for token.
func TestRealCopilotRunFinishesTwoStories(t *testing.T) {
	t.Parallel()
	testRealRun(t, "copilot", offline.Copilot, false)
}

// Copilot CLI at a usage limit retries 5 times (about 53 s), then exits 1
// with "Failed to get response from the AI model … Last error: 429 The usage
// limit has been reached": the child ends limited, usage_limit. It names no
// reset time there, so resetsAt stays empty.
func TestRealCopilotChildAtItsUsageLimitEndsLimited(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "copilot", offline.Copilot, "limit: {after: 0, for: 150s, kind: usage}\n", offline.Dialogs{})
	name := p.spawn(p.env, "--agent", "copilot", "--prompt", "Please write the proof file.")
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "3m")
	knew := time.Now()
	first, ok := firstLimited(p.srv)
	if code != 9 || res["finalState"] != "limited" || res["reason"] != "usage_limit" || res["agent"] != "copilot" || !ok {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v (limited exchange: %v)\noutput:\n%s", code, res, ok, tail(string(out), 3000))
	}
	if res["resetsAt"] != nil && res["resetsAt"] != "" {
		t.Fatalf("resetsAt %v: Copilot CLI names none", res["resetsAt"])
	}
	t.Logf("copilot: the CLI met the limit at %s; the monitor knew %.1fs later (its own retries included)",
		first.At.UTC().Format(time.RFC3339Nano), knew.Sub(first.At).Seconds())
}

// The hostile model of the sandbox tests (model-sim's escape fault) under
// Copilot CLI, wrapped whole in this tool's bubblewrap: its writes next to
// the project, in HOME, in /tmp and, from a worktree, to the project's
// checkout and the repository's hooks all fail; its toolchains and its own
// `git add -A` still work, and the story ends done. The CLI reaches
// model-sim through this tool's proxy, which refuses the hostile fetch of
// another host; the direct connections fail in the sandbox's network
// namespace.
func TestRealCopilotSandboxHoldsAHostileModelsWrites(t *testing.T) {
	t.Parallel()
	h := hostileRun(t, "copilot", offline.Copilot, "--stories", "1-2", "--parallel", "2")
	if !h.state.Config.Confined() {
		t.Fatalf("recorded sandbox %q, want on by default", h.state.Config.Sandbox)
	}
	expectWorktrees(t, h.state)
	for _, f := range append(append([]string{}, h.targets...), h.inWorktree...) {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the hostile model wrote %s outside its story", f)
		}
	}
	var seen strings.Builder
	for _, e := range h.srv.Exchanges() {
		seen.Write(e.Request)
	}
	if !strings.Contains(seen.String(), agentToolsOK) {
		t.Errorf("go, python3 or npm did not run in the sandbox: %q", toolsOutput().FindAllString(seen.String(), 3))
	}
	if !strings.Contains(seen.String(), agentGitAddOK) {
		t.Error("the agent's own `git add -A` did not pass in its sandbox")
	}
	for _, f := range append([]string{h.targets[1]}, h.inWorktree...) {
		if !strings.Contains(seen.String(), "DENIED write "+filepath.Dir(f)) && !strings.Contains(seen.String(), "DENIED write "+f) {
			t.Errorf("no denied write to %s reached the model: the escape was not tried or its denial is invisible", f)
		}
	}
	h.expectNetworkHeld(t, seen.String())
	if t.Failed() {
		t.Logf("what the agent's shell told the model: %q", triedLines().FindAllString(seen.String(), -1))
	}
}

// The control: with --sandbox off the same hostile model's writes land (its
// hook too, which the run's git guard catches: git_tampered).
func TestRealCopilotSandboxOffLetsTheHostileModelThrough(t *testing.T) {
	t.Parallel()
	expectThrough(t, hostileRunTo(t, "copilot", offline.Copilot, "git_tampered", "--sandbox", "off"))
}

// A loop started from a real Copilot CLI session's shell, with the hook
// installed by `hooks install --provider copilot --scope user` (its
// ~/.copilot/settings.json): our block answers to its agentStop make
// Copilot do exactly the asked iterations, then it stops — its hook can
// hold a session as Claude Code's Stop hook does.
func TestRealCopilotLoopRunsExactlyTheAskedIterations(t *testing.T) {
	t.Parallel()
	bin := builtBinary(t)
	p := newRealAgentProject(t, "copilot", offline.Copilot, tickLoopScript(bin), offline.Dialogs{})
	res, code := p.run(p.env, "hooks", "install", "--provider", "copilot", "--scope", "user", "--force")
	if code != 0 || res["file"] != filepath.Join(p.home, ".copilot", "settings.json") || res["event"] != "agentStop" {
		t.Fatalf("hooks install: %d %v", code, res)
	}
	copilot := exec.Command(realagent.Find("copilot"), "--yolo", "--no-auto-update", "-p", "Please start the tick loop.")
	copilot.Dir, copilot.Env = p.root, cleanEnv(p.env...)
	out, err := copilot.CombinedOutput()
	if err != nil {
		t.Fatalf("copilot: %v\n%s", err, out)
	}
	decisions := readDecisions(filepath.Join(p.root, ".claude", "story-automator.history.jsonl"))
	if got := strings.Join(decisions, ","); got != "continue,continue,max-iterations" && got != "block,block,max-iterations" {
		t.Fatalf("loop decisions %q, want two re-injections then max-iterations\n%s", got, out)
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, "ticks.txt")); strings.Count(string(b), "tick") != 2 {
		t.Fatalf("ticks.txt = %q, want the two re-injected iterations\n%s", b, out)
	}
}

// With the hook installed in the user's settings too, a child's turn is
// still stamped once: the installed hook and the child's own plugin both
// run, and the second stamp of the same turn is not a second turn.
func TestRealCopilotChildWithAnInstalledHookStampsItsTurnOnce(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "copilot", offline.Copilot, proofScript, offline.Dialogs{})
	if res, code := p.run(p.env, "hooks", "install", "--provider", "copilot", "--scope", "user", "--force"); code != 0 {
		t.Fatalf("hooks install: %d %v", code, res)
	}
	name := p.spawn(p.env, "--agent", "copilot", "--prompt", "Please write the proof file.")
	p.expectProof(t, name)
	st, err := sessionstate.Read(p.sessionsDir, name)
	if err != nil || st.Completion == nil || st.Completion.Turns != 1 {
		t.Fatalf("completion %+v %v, want one turn", st.Completion, err)
	}
}
