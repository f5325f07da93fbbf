package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// `hooks install --provider codex` makes the pinned Codex run our hook with
// no review: the entry is trusted with the hash Codex itself lists. Then a
// `codex exec` session starts a loop of 2 iterations from its own shell tool
// (owned through CODEX_THREAD_ID): the loop runs exactly 2 and stops, and
// `hooks uninstall` gives config.toml back byte for byte.
func TestRealCodexHooksInstallTrustsTheHookAndALoopRunsExactlyTwoIterations(t *testing.T) {
	t.Parallel()
	codex := realagent.Require(t, "codex")
	bin := builtBinary(t)
	script := `
rules:
  - match: "start the tick loop"
    actions:
      - shell: "'` + bin + `' loop start 'add one tick to ticks.txt' --max-iterations 2 > loop-start.json && echo tick >> ticks.txt"
      - reply: "Loop started and one tick added."
  - match: "add one tick"
    actions:
      - shell: "echo tick >> ticks.txt"
      - reply: "Added a tick."
`
	srv := startModelSim(t, script)
	root, _ := filepath.EvalSymlinks(t.TempDir())
	home := realHome(t)
	oenv, err := offline.Codex(offline.Config{Home: home, BaseURL: srv.URL(), Trusted: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	env := cleanEnv(append(oenv.Pairs(), "PATH="+filepath.Dir(codex)+":"+os.Getenv("PATH"), "PROJECT_ROOT="+root)...)
	run := func(args ...string) []byte {
		c := exec.Command(args[0], args[1:]...)
		c.Dir, c.Env = root, env
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	run("git", "init", "-q")
	config := filepath.Join(home, ".codex", "config.toml")
	before, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}

	var inst struct {
		Codex struct {
			Trusted *bool
			Keys    []string
			Action  string
		}
	}
	out := run(bin, "hooks", "install", "--provider", "codex", "--scope", "user", "--force", "--json")
	if err := json.Unmarshal(out, &inst); err != nil || inst.Codex.Trusted == nil || !*inst.Codex.Trusted || len(inst.Codex.Keys) != 1 {
		t.Fatalf("install did not trust the hook: %v\n%s", err, out)
	}
	var status struct {
		Hooks []struct {
			Provider, Scope string
			Installed       bool
			Codex           *struct {
				HooksEnabled bool
				Trusted      *bool
			}
		}
	}
	out = run(bin, "hooks", "status", "--json")
	if err := json.Unmarshal(out, &status); err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, h := range status.Hooks {
		if h.Provider == "codex" && h.Scope == "user" {
			seen = h.Installed && h.Codex != nil && h.Codex.HooksEnabled && h.Codex.Trusted != nil && *h.Codex.Trusted
		}
	}
	if !seen {
		t.Fatalf("hooks status does not say Codex trusts the hook:\n%s", out)
	}

	// No --dangerously-bypass-hook-trust: the hook runs because it is trusted.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, codex, "exec", "--dangerously-bypass-approvals-and-sandbox", "Please start the tick loop.")
	c.Dir, c.Env = root, env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}
	history := filepath.Join(root, ".claude", "story-automator.history.jsonl")
	if got := strings.Join(readDecisions(history), ","); got != "continue,max-iterations" && got != "block,max-iterations" {
		t.Fatalf("loop decisions %q, want one re-injection then max-iterations", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "ticks.txt")); strings.Count(string(b), "tick") != 2 {
		t.Fatalf("ticks.txt = %q, want exactly 2 iterations", b)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude", ".story-automator-active")); !os.IsNotExist(err) {
		t.Fatalf("the loop's marker is still there: %v", err)
	}
	// The loop was owned by the Codex session, through its CODEX_THREAD_ID.
	var started struct{ Marker struct{ OwnerSession string } }
	if b, _ := os.ReadFile(filepath.Join(root, "loop-start.json")); json.Unmarshal(b, &started) != nil || started.Marker.OwnerSession == "" {
		t.Fatalf("the loop has no owner session: %s", b)
	}

	run(bin, "hooks", "uninstall", "--provider", "codex", "--scope", "user", "--json")
	if after, _ := os.ReadFile(config); string(after) != string(before) {
		t.Errorf("config.toml after uninstall:\n%s\nwant\n%s", after, before)
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "hooks.json")); !os.IsNotExist(err) {
		t.Errorf("hooks.json left behind: %v", err)
	}
}
