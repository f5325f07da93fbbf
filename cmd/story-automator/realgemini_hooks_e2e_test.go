package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/sessionstate"
)

// `hooks install --provider gemini --scope user` in Gemini CLI's (private)
// home, then a real Gemini child: its AfterAgent hook runs our stop-hook,
// which reads the turn's prompt_response and records it for the session.
func TestRealGeminiAfterAgentHookFromHooksInstallRecordsTheTurn(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "gemini", offline.Gemini, `
rules:
  - match: "write the proof"
    actions:
      - shell: "printf 'proof\n' > proof.txt"
      - reply: "Wrote proof.txt for the AfterAgent hook."
`, offline.Dialogs{})
	res, code := p.run(p.env, "hooks", "install", "--provider", "gemini", "--scope", "user", "--force")
	if code != 0 || res["file"] != filepath.Join(p.home, ".gemini", "settings.json") || res["event"] != "AfterAgent" {
		t.Fatalf("hooks install: %d %v", code, res)
	}
	name := p.spawn(p.env, "--agent", "gemini", "--prompt", "Please write the proof file.")
	res, code = p.run(p.env, "monitor-session", name, "--timeout", "90s")
	if code != 0 || res["finalState"] != "completed" {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, tail(string(out), 3000))
	}
	st, err := sessionstate.Read(p.sessionsDir, name)
	if err != nil || st.Completion == nil || st.Completion.Turns != 1 ||
		!strings.Contains(st.Completion.Excerpt, "Wrote proof.txt for the AfterAgent hook.") {
		t.Fatalf("the stop-hook did not record the turn from prompt_response: %+v %v", st, err)
	}
}

// A loop started from a real Gemini CLI session's shell, with the hook
// installed by `hooks install --provider gemini` in the project: our block
// answers make Gemini do exactly the asked iterations, then it stops.
func TestRealGeminiLoopRunsExactlyTheAskedIterations(t *testing.T) {
	t.Parallel()
	bin := builtBinary(t)
	p := newRealAgentProject(t, "gemini", offline.Gemini, tickLoopScript(bin), offline.Dialogs{})
	if res, code := p.run(p.env, "hooks", "install", "--provider", "gemini", "--force"); code != 0 {
		t.Fatalf("hooks install: %d %v", code, res)
	}
	gemini := exec.Command(realagent.Find("gemini"), "--yolo", "-p", "Please start the tick loop.")
	gemini.Dir, gemini.Env = p.root, cleanEnv(p.env...)
	out, err := gemini.CombinedOutput()
	if err != nil {
		t.Fatalf("gemini: %v\n%s", err, out)
	}
	decisions := readDecisions(filepath.Join(p.root, ".claude", "story-automator.history.jsonl"))
	if got := strings.Join(decisions, ","); got != "continue,continue,max-iterations" && got != "block,block,max-iterations" {
		t.Fatalf("loop decisions %q, want two re-injections then max-iterations\n%s", got, out)
	}
	if b, _ := os.ReadFile(filepath.Join(p.root, "ticks.txt")); strings.Count(string(b), "tick") != 2 {
		t.Fatalf("ticks.txt = %q, want the two re-injected iterations\n%s", b, out)
	}
}

// tickLoopScript is model-sim's script for the loop tests: the session
// starts a three-iteration loop with the built binary at bin, and each
// iteration's prompt adds one tick to ticks.txt.
func tickLoopScript(bin string) string {
	return `
rules:
  - match: "start the tick loop"
    actions:
      - shell: "'` + bin + `' loop start 'add one tick to ticks.txt' --max-iterations 3 > loop-start.json"
      - reply: "Loop started."
  - match: "add one tick"
    actions:
      - shell: "echo tick >> ticks.txt"
      - reply: "Added a tick."
`
}
