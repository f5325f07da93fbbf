package doctor

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/hooks"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/monitor"
)

func TestTrustIsReadFromEachCLIsOwnRecord(t *testing.T) {
	home, root := t.TempDir(), "/work/project"
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	if c := checkTrust("claude", root, getenv); c.Status != Warn || c.Fix == "" {
		t.Fatalf("untrusted claude: %+v", c)
	}
	writeFile(t, filepath.Join(home, ".claude.json"), `{"projects":{"/work":{"hasTrustDialogAccepted":true}}}`, 0o600)
	if c := checkTrust("claude", root, getenv); c.Status != OK {
		t.Fatalf("a trusted parent folder: %+v", c)
	}
	writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"/work/project":"TRUST_FOLDER"}`, 0o600)
	if c := checkTrust("gemini", root, getenv); c.Status != OK {
		t.Fatalf("trusted gemini: %+v", c)
	}
	if c := checkTrust("gemini", "/elsewhere", getenv); c.Status != Warn {
		t.Fatalf("gemini elsewhere: %+v", c)
	}
}

func TestAuthNamesWhereCredentialsAreWithoutPrintingThem(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir(), "ANTHROPIC_API_KEY": "sk-secret-value"}
	c := checkAuth("claude", func(k string) string { return env[k] })
	if c.Status != OK || c.Detail != "ANTHROPIC_API_KEY is set" {
		t.Fatalf("auth %+v", c)
	}
	delete(env, "ANTHROPIC_API_KEY")
	if c := checkAuth("claude", func(k string) string { return env[k] }); c.Status != Warn || c.Fix == "" {
		t.Fatalf("no auth %+v", c)
	}
}

func TestRehearsalAtADialogFailsWithTheDialogsAction(t *testing.T) {
	res := monitor.Result{FinalState: monitor.Stuck, Reason: monitor.ReasonDialog, Dialog: "trust_folder", Action: "trust it"}
	c := judge(Check{Name: "rehearsal", Agent: "claude"}, "claude", res, nil)
	if c.Status != Fail || c.Fix != "trust it" {
		t.Fatalf("%+v", c)
	}
	c = judge(Check{Name: "rehearsal", Agent: "claude"}, "claude", monitor.Result{FinalState: monitor.Completed, Reason: monitor.SignalScreen}, nil)
	if c.Status != Warn {
		t.Fatalf("a Claude turn seen only by screen: %+v", c)
	}
}

func TestRootWithoutTheSandboxVariableFailsWithTheFix(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if _, ok := checkRoot("claude", 1000, getenv); ok {
		t.Fatal("a check for a user other than root")
	}
	if _, ok := checkRoot("codex", 0, getenv); ok {
		t.Fatal("a root check for a CLI that does not refuse root")
	}
	c, ok := checkRoot("claude", 0, getenv)
	if !ok || c.Status != Fail || !strings.Contains(c.Fix, "IS_SANDBOX=1") {
		t.Fatalf("root without IS_SANDBOX: %+v", c)
	}
	env["IS_SANDBOX"] = "1"
	if c, _ := checkRoot("claude", 0, getenv); c.Status != OK {
		t.Fatalf("root with IS_SANDBOX=1: %+v", c)
	}
}

// A failed rehearsal says what the child last printed, and where the rest is.
func TestAFailedRehearsalQuotesTheChildsLastWords(t *testing.T) {
	out := filepath.Join(t.TempDir(), "child.log")
	writeFile(t, out, "\x1b[31mInvalid API key · Please run /login\x1b[0m\r\n\r\n", 0o600)
	c := judge(Check{Name: "rehearsal"}, "claude", monitor.Result{FinalState: monitor.Crashed, Reason: "exit_code_1", OutputFile: out}, nil)
	if c.Status != Fail || !strings.Contains(c.Detail, `"Invalid API key · Please run /login"`) || !strings.Contains(c.Detail, out) {
		t.Fatalf("%+v", c)
	}
}

// Codex's key may live in the variable its config.toml's model provider names.
func TestCodexAuthReadsTheProvidersEnvKey(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), "model_provider = \"local\"\n[model_providers.local]\nenv_key = \"LOCAL_KEY\"\n", 0o600)
	env := map[string]string{"HOME": home, "LOCAL_KEY": "secret"}
	if c := checkAuth("codex", func(k string) string { return env[k] }); c.Status != OK || c.Detail != "LOCAL_KEY is set" {
		t.Fatalf("auth %+v", c)
	}
}

// writeFile writes text to path, making its folder (0700) first; a failure
// fails the test.
func writeFile(t *testing.T, path, text string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		t.Fatal(err)
	}
}

// fakeCodex lists one hook with the trust status given.
type fakeCodex struct {
	hook   hooks.Hook
	path   string
	status string
}

func (f fakeCodex) ListHooks(ctx context.Context, cwd string) ([]hooks.CodexHook, error) {
	return []hooks.CodexHook{{Key: "k", EventName: "stop", Command: f.hook.Command, SourcePath: f.path, TrustStatus: f.status}}, nil
}

// An installed Codex hook that Codex does not trust (or runs with hooks
// off) is not reported as fine: doctor says what to do.
func TestCodexHookMustBeEnabledAndTrusted(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	exe, _ := os.Executable()
	hook, err := hooks.NewHook(exe)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ".codex", "hooks.json")
	if _, err := hooks.Install(path, hook, hooks.Options{}); err != nil {
		t.Fatal(err)
	}
	o := Options{Root: t.TempDir(), Hook: hook, Getenv: getenv, Codex: fakeCodex{hook, path, "untrusted"}}
	if c := checkHooks(context.Background(), "codex", o, getenv); c.Status != Warn || !strings.Contains(c.Fix, "Trust all and continue") {
		t.Fatalf("untrusted: %+v", c)
	}
	o.Codex = fakeCodex{hook, path, "trusted"}
	if c := checkHooks(context.Background(), "codex", o, getenv); c.Status != OK || !strings.Contains(c.Detail, "trusted by Codex") {
		t.Fatalf("trusted: %+v", c)
	}
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), "[features]\nhooks = false\n", 0o600)
	if c := checkHooks(context.Background(), "codex", o, getenv); c.Status != Fail || !strings.Contains(c.Fix, "hooks install --provider codex") {
		t.Fatalf("hooks off: %+v", c)
	}
}

// Gemini CLI's hook is looked for under AfterAgent in its own settings.
func TestGeminiHookIsLookedForUnderAfterAgent(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	getenv := func(k string) string { return map[string]string{"HOME": home, "PATH": os.Getenv("PATH")}[k] }
	exe := filepath.Join(t.TempDir(), "story-automator")
	writeFile(t, exe, "#!/bin/sh\n", 0o700)
	h := hooks.Hook{Command: `"` + exe + `" stop-hook`, Timeout: 30}
	if c := checkHooks(context.Background(), "gemini", Options{Root: root, Hook: h, Getenv: getenv}, getenv); c.Status != Warn || !strings.Contains(c.Fix, "--provider gemini") {
		t.Fatalf("no hook: %+v", c)
	}
	path := filepath.Join(home, ".gemini", "settings.json")
	writeFile(t, path, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"\"`+exe+`\" stop-hook"}]}]}}`, 0o600)
	if c := checkHooks(context.Background(), "gemini", Options{Root: root, Hook: h, Getenv: getenv}, getenv); c.Status != Warn {
		t.Fatalf("a Stop entry Gemini never runs: %+v", c)
	}
	writeFile(t, path, `{"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":"\"`+exe+`\" stop-hook","timeout":30000}]}]}}`, 0o600)
	if c := checkHooks(context.Background(), "gemini", Options{Root: root, Hook: h, Getenv: getenv}, getenv); c.Status != OK || !strings.Contains(c.Detail, "AfterAgent") {
		t.Fatalf("installed: %+v", c)
	}
	writeFile(t, path, `{"hooksConfig":{"enabled":false},"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":"\"`+exe+`\" stop-hook","timeout":30000}]}]}}`, 0o600)
	if c := checkHooks(context.Background(), "gemini", Options{Root: root, Hook: h, Getenv: getenv}, getenv); c.Status != Warn || !strings.Contains(c.Detail, "hooksConfig.enabled is false") {
		t.Fatalf("hooks off: %+v", c)
	}
}

// Each CLI agent's hook is checked where the installer puts it.
func TestHookProvidersAreTheInstallers(t *testing.T) {
	for _, a := range agent.HookProviders() {
		if len(hooks.Scopes(hooks.Provider(a))) == 0 {
			t.Errorf("%s: no settings file the installer knows", a)
		}
	}
	// A CLI with no hook to install (OpenCode) is told so, not failed.
	for _, a := range agent.CLIAgents() {
		if slices.Contains(agent.HookProviders(), a) {
			continue
		}
		if c := checkHooks(context.Background(), a, Options{Root: t.TempDir()}, os.Getenv); c.Status != OK || !strings.Contains(c.Detail, "need no installed hook") {
			t.Errorf("%s: %+v", a, c)
		}
	}
}

// Every CLI agent can be rehearsed offline: model-sim writes a home for it.
func TestEveryCLIAgentHasAnOfflineHome(t *testing.T) {
	for _, a := range agent.CLIAgents() {
		if _, ok := offline.For(a); !ok {
			t.Errorf("no offline home for %s", a)
		}
	}
	if _, ok := offline.For(agent.AgentSim); ok {
		t.Error("the sim needs no offline home")
	}
}

// A story's worktree lives under the project's .git (orchestrator.Worktrees):
// the trust the user gave the project covers it, and nothing else.
func TestAStorysWorktreeHasTheProjectsTrust(t *testing.T) {
	home, root := t.TempDir(), "/work/project"
	wt := filepath.Join(root, ".git", "story-automator", "worktrees", "run-1", "1-2")
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	for _, agent := range []string{"claude", "gemini"} {
		if c := checkTrust(agent, wt, getenv); c.Status != Warn {
			t.Fatalf("%s trusts the worktree of an untrusted project: %+v", agent, c)
		}
	}
	writeFile(t, filepath.Join(home, ".claude.json"), `{"projects":{"/work/project":{"hasTrustDialogAccepted":true}}}`, 0o600)
	writeFile(t, filepath.Join(home, ".gemini", "trustedFolders.json"), `{"/work/project":"TRUST_FOLDER"}`, 0o600)
	for _, agent := range []string{"claude", "gemini"} {
		if c := checkTrust(agent, wt, getenv); c.Status != OK {
			t.Fatalf("%s: the worktree of a trusted project: %+v", agent, c)
		}
	}
}

// Auth and trust come from the profile table: the state directory's
// variable, the config-named key, the trust environment.
func TestAuthAndTrustFollowTheProfilesFacts(t *testing.T) {
	home, state := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home, "CODEX_HOME": state}
	getenv := func(k string) string { return env[k] }
	if c := checkAuth("codex", getenv); c.Status != Warn || !strings.Contains(c.Fix, "codex login") {
		t.Fatalf("codex without credentials: %+v", c)
	}
	writeFile(t, filepath.Join(state, "config.toml"), "model_provider = \"p\"\n[model_providers.p]\nenv_key = \"MY_KEY\"\n", 0o600)
	env["MY_KEY"] = "secret"
	if c := checkAuth("codex", getenv); c.Status != OK || c.Detail != "MY_KEY is set" {
		t.Fatalf("the provider's key: %+v", c)
	}
	delete(env, "MY_KEY")
	writeFile(t, filepath.Join(state, "auth.json"), "{}", 0o600)
	if c := checkAuth("codex", getenv); c.Status != OK || c.Detail != "credentials in "+filepath.Join(state, "auth.json") {
		t.Fatalf("auth.json under CODEX_HOME: %+v", c)
	}
	if c := checkTrust("codex", "/p", getenv); c.Status != OK || c.Detail != "codex exec does not ask to trust a folder" {
		t.Fatalf("codex trust: %+v", c)
	}
	env["GEMINI_CLI_TRUST_WORKSPACE"] = "TRUE"
	if c := checkTrust("gemini", "/p", getenv); c.Status != OK || !strings.Contains(c.Detail, "GEMINI_CLI_TRUST_WORKSPACE") {
		t.Fatalf("gemini trusted by the environment: %+v", c)
	}
}

func TestAgentsTakesTheTablesNamesAndDefault(t *testing.T) {
	got, err := Agents(context.Background(), []string{"codex, sim", "gemini"}, nil)
	if err != nil || strings.Join(got, " ") != "codex sim gemini" {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := Agents(context.Background(), []string{"custom"}, nil); err == nil || !strings.Contains(err.Error(), "use claude, codex, copilot, gemini, opencode or sim") {
		t.Fatalf("custom: %v", err)
	}
	// No agent CLI on an empty PATH: the table's default is checked.
	if got, _ := Agents(context.Background(), nil, []string{"PATH=" + t.TempDir()}); strings.Join(got, " ") != "claude" {
		t.Fatalf("default %v", got)
	}
}
