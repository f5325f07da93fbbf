package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// realClaudeProject is a scratch project, a private tmux server, model-sim and
// a private home in which the pinned Claude Code runs offline.
type realClaudeProject struct {
	*sessionProject
	env  []string
	home string
	srv  *modelsim.Server
}

func newRealClaudeProject(t testing.TB, script string, leave offline.Dialogs) *realClaudeProject {
	t.Helper()
	return newRealAgentProject(t, "claude", offline.Claude, script, leave)
}

// newRealAgentProject is newRealClaudeProject for any agent CLI with its offline home.
func newRealAgentProject(t testing.TB, agent string, homeFor func(offline.Config) (offline.Env, error), script string, leave offline.Dialogs) *realClaudeProject {
	t.Helper()
	cli := realagent.Require(t, agent)
	srv := startModelSim(t, script)
	p := newSessionProject(t, tmuxtest.Socket(t))
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	p.root = root
	home := realHome(t)
	oenv, err := homeFor(offline.Config{Home: home, BaseURL: srv.URL(), Trusted: []string{root}, Leave: leave})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"))
	return &realClaudeProject{sessionProject: p, env: env, home: home, srv: srv}
}

// realHome is a private home for a real CLI; whatever the CLI leaves running
// from it (Codex's managed app-server daemon) is stopped when the test ends.
func realHome(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	realagent.StopStrays(t, home)
	return home
}

// startModelSim serves script (YAML rules) on loopback for the test, acting
// through this binary's agent-sim where a step asks for it.
func startModelSim(t testing.TB, script string) *modelsim.Server {
	t.Helper()
	sc, err := modelsim.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := modelsim.Start(modelsim.Options{Script: sc, Exe: builtBinary(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		if t.Failed() {
			logToolTraffic(t, srv)
		}
	})
	return srv
}

// logToolTraffic logs, for a failed test, each tool call model-sim asked
// for and what the CLI's tool answered: where a confined shell call that
// did nothing shows why.
func logToolTraffic(t testing.TB, srv *modelsim.Server) {
	t.Helper()
	for _, ex := range srv.Exchanges() {
		if res, ok := ex.Conversation().LastToolResult(); ok {
			t.Logf("model-sim #%d %s: tool result: %s", ex.Seq, ex.At.UTC().Format("15:04:05.000"), tail(res, 1500))
		}
		if ex.Call != nil {
			t.Logf("model-sim #%d %s: tool call: %v", ex.Seq, ex.At.UTC().Format("15:04:05.000"), ex.Call)
		}
	}
}

// proofScript has the agent write proof.txt through its own shell tool.
const proofScript = `
rules:
  - match: "write the proof"
    actions:
      - shell: "printf 'proof\n' > proof.txt"
      - reply: "Wrote proof.txt."
`

// expectProof waits for the child's completion and checks the file it wrote.
func (p *realClaudeProject) expectProof(t *testing.T, name string) {
	t.Helper()
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "90s")
	if code != 0 || res["finalState"] != "completed" {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, tail(string(out), 3000))
	}
	if b, err := os.ReadFile(filepath.Join(p.root, "proof.txt")); err != nil || string(b) != "proof\n" {
		// The pane says what the agent's shell tool answered (a confined
		// call that failed shows its error there).
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("proof.txt = %q, %v\noutput:\n%s", b, err, tail(string(out), 3000))
	}
}

// expectDialog waits for the child to end stuck at the dialog kind, with an action.
func (p *realClaudeProject) expectDialog(t *testing.T, name, kind string) {
	t.Helper()
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "60s")
	if code != 5 || res["finalState"] != "stuck" || res["reason"] != "dialog" || res["dialog"] != kind || stringOr(res["action"]) == "" {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v, want stuck at %s\noutput: %q", code, res, kind, tail(string(out), 2000))
	}
}

// A real Claude Code child that writes a file is seen completed through the
// Stop hook registered for its session alone, and the file is there.
func TestRealClaudeChildIsSeenCompletedByItsOwnStopHook(t *testing.T) {
	t.Parallel()
	p := newRealClaudeProject(t, proofScript, offline.Dialogs{})
	name := p.spawn(p.env, "--agent", "claude", "--prompt", "Please write the proof file.")
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "90s", "--idle-debounce", "30s")
	if code != 0 || res["finalState"] != "completed" || res["reason"] != "stop_hook" {
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("monitor = %d %v\noutput:\n%s", code, res, tail(string(out), 3000))
	}
	if b, err := os.ReadFile(filepath.Join(p.root, "proof.txt")); err != nil || string(b) != "proof\n" {
		// The pane says what the agent's shell tool answered (a confined
		// call that failed shows its error there).
		out, _ := os.ReadFile(stringOr(res["outputFile"]))
		t.Fatalf("proof.txt = %q, %v\noutput:\n%s", b, err, tail(string(out), 3000))
	}
	// The user's settings were never edited: the hook came through --settings.
	if _, err := os.Stat(filepath.Join(p.root, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatalf("project settings written: %v", err)
	}
}

// With hooks switched off in the user's Claude settings, the finished turn
// is still seen, from the screen of the real CLI.
func TestRealClaudeChildIsSeenCompletedFromItsScreen(t *testing.T) {
	t.Parallel()
	p := newRealClaudeProject(t, `
rules:
  - match: "say hello"
    actions:
      - reply: "Hello."
`, offline.Dialogs{})
	settings := filepath.Join(p.home, ".claude", "settings.json")
	if err := os.WriteFile(settings, []byte(`{"skipDangerousModePermissionPrompt":true,"disableAllHooks":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	name := p.spawn(p.env, "--agent", "claude", "--prompt", "Please say hello.")
	res, code := p.run(p.env, "monitor-session", name, "--timeout", "90s", "--idle-debounce", "2s")
	if code != 0 || res["finalState"] != "completed" || res["reason"] != "screen_heuristic" {
		t.Fatalf("monitor = %d %v", code, res)
	}
}

func stringOr(v any) string {
	s, _ := v.(string)
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}

// A real Claude Code child in a folder it does not trust parks at the trust
// dialog (whose default answer exits); the monitor ends it stuck at that
// dialog with the user's action, long before its timeout.
func TestRealClaudeChildAtTheTrustDialogEndsStuck(t *testing.T) {
	t.Parallel()
	p := newRealClaudeProject(t, "rules: []\n", offline.Dialogs{TrustFolder: true})
	name := p.spawn(p.env, "--agent", "claude", "--prompt", "Please say hello.")
	p.expectDialog(t, name, "trust_folder")
	if n := len(p.srv.Exchanges()); n != 0 {
		t.Fatalf("the model was asked %d times behind the dialog", n)
	}
}

// With --trust-project the same child's trust dialog is answered for the
// project folder as the user would (Claude Code then records the trust in its
// own config), and the turn behind it runs and is seen completed.
func TestRealClaudeChildWithTrustProjectPassesTheTrustDialog(t *testing.T) {
	t.Parallel()
	p := newRealClaudeProject(t, proofScript, offline.Dialogs{TrustFolder: true})
	name := p.spawn(p.env, "--agent", "claude", "--trust-project", "--prompt", "Please write the proof file.")
	p.expectProof(t, name)
	var state struct {
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	b, err := os.ReadFile(filepath.Join(p.home, ".claude.json"))
	if err != nil || json.Unmarshal(b, &state) != nil || !state.Projects[p.root].HasTrustDialogAccepted {
		t.Fatalf("~/.claude.json does not trust %s: %s %v", p.root, b, err)
	}
}

// Gemini CLI in a folder it does not trust exits 55 at once; that is its
// trust dialog (stuck, with the action), not a crash to retry.
func TestRealGeminiChildInAnUntrustedFolderEndsStuckAtTheTrustDialog(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "gemini", offline.Gemini, "rules: []\n", offline.Dialogs{TrustFolder: true})
	name := p.spawn(p.env, "--agent", "gemini", "--prompt", "Please say hello.")
	p.expectDialog(t, name, "trust_folder")
}

// With --trust-project Gemini CLI trusts the project folder for that child
// alone (through its environment) and does the turn.
func TestRealGeminiChildWithTrustProjectRunsInAnUntrustedFolder(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "gemini", offline.Gemini, proofScript, offline.Dialogs{TrustFolder: true})
	name := p.spawn(p.env, "--agent", "gemini", "--trust-project", "--prompt", "Please write the proof file.")
	p.expectProof(t, name)
}

// As root, the pinned Claude Code refuses --dangerously-skip-permissions
// without IS_SANDBOX=1 and exits 1 at once: the child ends stuck at the
// run_as_root dialog with the action, not crashed (so a run does not retry it).
// Only an unconfined child gets that switch, hence --sandbox off.
func TestRealClaudeAsRootWithoutSandboxEndsStuck(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root meets Claude Code's root refusal")
	}
	p := newRealClaudeProject(t, "rules: []\n", offline.Dialogs{})
	var env []string
	for _, kv := range p.env {
		if !strings.HasPrefix(kv, "IS_SANDBOX=") {
			env = append(env, kv)
		}
	}
	name := p.spawn(env, "--agent", "claude", "--sandbox", "off", "--prompt", "Please say hello.")
	res, code := p.run(env, "monitor-session", name, "--timeout", "60s")
	if code != 5 || res["reason"] != "dialog" || res["dialog"] != "run_as_root" || !strings.Contains(stringOr(res["action"]), "IS_SANDBOX=1") {
		t.Fatalf("monitor = %d %v, want stuck at run_as_root", code, res)
	}
}

// A confined Claude Code child (the default) starts without the bypass
// switch, so as root it needs no IS_SANDBOX=1.
func TestRealClaudeConfinedAsRootNeedsNoSandboxVariable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root meets Claude Code's root refusal")
	}
	p := newRealClaudeProject(t, proofScript, offline.Dialogs{})
	var env []string
	for _, kv := range p.env {
		if !strings.HasPrefix(kv, "IS_SANDBOX=") {
			env = append(env, kv)
		}
	}
	p.env = env
	name := p.spawn(env, "--agent", "claude", "--prompt", "Please write the proof file.")
	p.expectProof(t, name)
}

// Each first-run dialog of the pinned Claude Code, reproduced by leaving its
// answer out of the private home, ends the child stuck at that dialog with
// its action, before any model request; --trust-project answers none of them.
// The bypass warning belongs to the unconfined start (--sandbox off): a
// confined child never shows it.
func TestRealClaudeChildAtEachFirstRunDialogEndsStuck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		want    string
		leave   offline.Dialogs
		sandbox string
	}{
		{"bypass_permissions", offline.Dialogs{BypassPermissions: true}, "off"},
		{"api_key", offline.Dialogs{APIKey: true}, "on"},
		{"onboarding", offline.Dialogs{Onboarding: true}, "on"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			p := newRealClaudeProject(t, "rules: []\n", tc.leave)
			name := p.spawn(p.env, "--agent", "claude", "--sandbox", tc.sandbox, "--trust-project", "--prompt", "Please say hello.")
			p.expectDialog(t, name, tc.want)
			if n := len(p.srv.Exchanges()); n != 0 {
				t.Fatalf("the model was asked %d times behind the dialog", n)
			}
		})
	}
}

// Gemini CLI with no sign-in refuses to start (exit 41): stuck at the
// auth_method dialog with the action, not a crash to retry.
func TestRealGeminiChildWithoutSignInEndsStuck(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "gemini", offline.Gemini, "rules: []\n", offline.Dialogs{AuthMethod: true})
	name := p.spawn(p.env, "--agent", "gemini", "--prompt", "Please say hello.")
	p.expectDialog(t, name, "auth_method")
}
