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
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/resolve"
	"github.com/story-automator/story-automator/sessionstate"
)

// The real Claude Code against model-sim: a run whose create step Claude
// could not finish escalates; `resolve 1.1` opens Claude Code for a person
// on a terminal, its first message the brief (model-sim sees it), Claude
// stays open after its turn; the person's /exit ends it normally and the
// story is re-armed.
func TestRealClaudeResolveSessionThenRearm(t *testing.T) {
	t.Parallel()
	claude := realagent.Require(t, "claude")
	srv := startModelSim(t, `
rules:
  - match: "Create the story file"
    actions: [{reply: "I cannot write this story."}]
  - match: "You are helping a person resolve story 1.1"
    actions: [{reply: "RESOLVE-SEEN: I read why story 1.1 stopped."}]
`)
	p := newRunProject(t)
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.root, ".story-automator", "workflow.yaml"), []byte("steps:\n  create:\n    retries: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "policy")
	oenv, err := offline.Claude(offline.Config{Home: realHome(t), BaseURL: srv.URL(), Trusted: []string{root, p.root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(claude)+":"+os.Getenv("PATH"))
	res, code := p.run(env, "run", "--agent", "claude", "--epic", "1", "--stories", "1", "--json", "--completion-rechecks", "1")
	if code == 0 {
		t.Fatalf("run: exit %d %v\n%s", code, res, p.stateLog())
	}
	if u := p.state().Unit("1-1"); !resolve.Blocked(u) {
		t.Fatalf("run: exit %d %v, 1.1 %+v\n%s", code, res, u, p.stateLog())
	}

	done, screen, _ := p.resolveOnATerminalWith(t, "RESOLVE-SEEN", env...)
	name := p.resolveSession(t)
	dir := sessionstate.Dir(p.root, func(string) string { return "" })
	deadline := time.Now().Add(60 * time.Second)
	for { // the turn's end, stamped by the Stop hook: polled
		if st, err := sessionstate.Read(dir, name); err == nil && st.Completion != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Claude Code's turn never ended:\n%s", screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := exec.Command("tmux", "-L", p.socket, "send-keys", "-t", name, "/exit").Run(); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("tmux", "-L", p.socket, "send-keys", "-t", name, "Enter").Run(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("resolve after /exit: %v\n%s", err, screen)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("resolve did not end after /exit:\n%s", screen)
	}
	u := p.state().Unit("1-1")
	if u.Status != orchestrator.StatusPending || u.Step(orchestrator.StepCreate).Status != orchestrator.StatusPending {
		t.Fatalf("after the session: 1.1 %+v\n%s", u, p.stateLog())
	}
	seen := false
	for _, e := range srv.Exchanges() {
		if strings.Contains(e.Text, "RESOLVE-SEEN") && strings.Contains(string(e.Request), "You are helping a person resolve story 1.1") &&
			strings.Contains(string(e.Request), "Run state document: "+p.stateFileOf()) {
			seen = true
		}
	}
	if !seen {
		t.Fatal("model-sim never got the brief naming the story and its state document")
	}
}
