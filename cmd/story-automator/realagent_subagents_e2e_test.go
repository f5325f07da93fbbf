package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// subagentScript has the child's model launch one subagent through its
// CLI's subagent tool and use what it returned; the subagent's own
// requests reach model-sim as a conversation of their own.
const subagentScript = `
rules:
  - match: "Reply with the probe token"
    actions:
      - reply: "PROBE-TOKEN-4711"
  - match: "subagent probe"
    actions:
      - subagent: "Reply with the probe token and nothing else."
        capture: {token: 'PROBE-TOKEN-([0-9]+)'}
      - reply: "the subagent said {{.token}}"
`

// The real Claude Code, confined as `session spawn` confines every child
// (--permission-mode dontAsk with only Bash, Edit and Write allowed), runs
// a blocking subagent as BMAD 6.12's worker does: its Agent call returns
// the subagent's answer to the same turn. Claude Code 2.1 backgrounds an
// agent unless background tasks are off (the child's
// CLAUDE_CODE_DISABLE_BACKGROUND_TASKS): without it the call answers
// "Async agent launched successfully" and the turn ends without the
// subagent's result.
func TestRealClaudeConfinedChildRunsABlockingSubagent(t *testing.T) {
	t.Parallel()
	realSubagent(t, "claude", offline.Claude)
}

// The same for Gemini CLI: its invoke_agent call runs the generalist
// subagent, which hands its answer back through complete_task.
func TestRealGeminiConfinedChildRunsABlockingSubagent(t *testing.T) {
	t.Parallel()
	realSubagent(t, "gemini", offline.Gemini)
}

// The same for Codex: its spawn_agent call starts the subagent and returns
// at once; the wait_agent call that follows blocks until it is done, and
// the subagent's answer reaches the parent's turn.
func TestRealCodexConfinedChildRunsABlockingSubagent(t *testing.T) {
	t.Parallel()
	realSubagent(t, "codex", offline.Codex)
}

// realSubagent has a confined child of agentName launch one subagent and
// checks its answer reached the child's own turn.
func realSubagent(t *testing.T, agentName string, home func(offline.Config) (offline.Env, error)) {
	cli := realagent.Require(t, agentName)
	rp, _ := newBMAD612Project(t)
	root, err := filepath.EvalSymlinks(rp.root)
	if err != nil {
		t.Fatal(err)
	}
	srv := startModelSim(t, subagentScript)
	oenv, err := home(offline.Config{Home: realHome(t), BaseURL: srv.URL(), Trusted: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"))
	sp := &sessionProject{t: t, bin: rp.bin, root: root, socket: rp.socket,
		sessionsDir: filepath.Join(root, ".story-automator", "sessions")}
	res, code := sp.run(env, "session", "spawn", "--step", "dev", "--story", "1.1", "--agent", agentName,
		"--prompt", "subagent probe: launch one subagent and report what it said.")
	name := stringOr(res["session"])
	if code != 0 || name == "" {
		t.Fatalf("spawn: %d %v", code, res)
	}
	res, code = sp.run(env, "monitor-session", name, "--timeout", "300s")
	if code != 0 || res["finalState"] != "completed" {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, tail(string(out), 3000))
	}
	launched, answered, parentSaw := false, false, false
	for _, e := range srv.Exchanges() {
		if e.Call != nil && e.Call.Subagent != "" {
			launched = true
		}
		if e.Text == "PROBE-TOKEN-4711" {
			answered = true
		}
		if e.Text == "the subagent said 4711" {
			parentSaw = true
		}
	}
	if !launched || !answered || !parentSaw {
		t.Fatalf("launched %v, the subagent answered %v, the parent got its answer %v:\n%s", launched, answered, parentSaw,
			exchangeSummary(srv.Exchanges()))
	}
}

// exchangeSummary is one line per exchange: its call or its text.
func exchangeSummary(ex []modelsim.Exchange) string {
	var b strings.Builder
	for _, e := range ex {
		fmt.Fprintf(&b, "#%d side=%v call=%+v text=%q\n", e.Seq, e.Side, e.Call, tail(e.Text, 200))
	}
	return b.String()
}
