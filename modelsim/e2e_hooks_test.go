package modelsim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// blockOnceHook writes a hook command that blocks the first stop with a
// reason asking for the loop's second iteration, then lets the agent stop.
func blockOnceHook(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "hook.sh")
	script := "#!/bin/sh\ncat > /dev/null\nif [ ! -e " + shellword.MustQuote(dir+"/blocked") + " ]; then\n" +
		"  touch " + shellword.MustQuote(dir+"/blocked") + "\n" +
		"  printf '%s\\n' '{\"decision\":\"block\",\"reason\":\"Run `echo 2 >> ticks.txt`, then stop.\"}'\nfi\nexit 0\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func hookSettings(event, command string) map[string]any {
	return map[string]any{event: []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}}}
}

// checkTwoIterations checks the agent ran the prompt's command, then the
// command the hook's block reason asked for.
func checkTwoIterations(t *testing.T, srv *modelsim.Server, dir string, run agentRun) {
	t.Helper()
	if run.err != nil {
		t.Fatalf("agent: %v\n%s\n%s", run.err, run.out, run.log)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "ticks.txt")); string(data) != "1\n2\n" {
		t.Errorf("ticks.txt = %q, want two iterations\n%s\n%s", data, run.out, run.log)
	}
	if calls := toolCalls(srv); len(calls) != 2 {
		t.Errorf("%d tool calls, want 2", len(calls))
	}
}

const loopPrompt = "Run `echo 1 >> ticks.txt`, then stop."

// checkHookLoop runs cli with a block-once hook, which install puts into the
// CLI's arguments or settings, and checks that both iterations ran.
func checkHookLoop(t *testing.T, cli agentCLI, install func(cli *agentCLI, hook string)) {
	t.Helper()
	srv := scriptedServer(t, "rules: []\n")
	dir := t.TempDir()
	install(&cli, blockOnceHook(t))
	checkTwoIterations(t, srv, dir, runAgent(t, cli, offline.Config{}, srv, dir, loopPrompt))
}

// setupThen runs setup, then then with its environment.
func setupThen(setup func(offline.Config) (offline.Env, error), then func(offline.Config, offline.Env) error) func(offline.Config) (offline.Env, error) {
	return func(c offline.Config) (offline.Env, error) {
		env, err := setup(c)
		if err != nil {
			return env, err
		}
		return env, then(c, env)
	}
}

func TestE2EClaudeDoesTheIterationAStopHookAsksFor(t *testing.T) {
	t.Parallel()
	checkHookLoop(t, claudeCLI, func(cli *agentCLI, hook string) {
		settings, _ := json.Marshal(map[string]any{"hooks": hookSettings("Stop", hook)})
		cli.argv = func(p string) []string {
			return []string{"-p", "--dangerously-skip-permissions", "--settings", string(settings), p}
		}
	})
}

func TestE2ECodexDoesTheIterationAStopHookAsksFor(t *testing.T) {
	t.Parallel()
	checkHookLoop(t, codexCLI, func(cli *agentCLI, hook string) {
		cli.setup = setupThen(cli.setup, func(_ offline.Config, env offline.Env) error {
			data, _ := json.Marshal(map[string]any{"hooks": hookSettings("Stop", hook)})
			return os.WriteFile(filepath.Join(env.Set["CODEX_HOME"], "hooks.json"), data, 0o600)
		})
		cli.argv = func(p string) []string {
			return []string{"exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", p}
		}
	})
}

func TestE2EGeminiDoesTheIterationAnAfterAgentHookAsksFor(t *testing.T) {
	t.Parallel()
	checkHookLoop(t, geminiCLI, func(cli *agentCLI, hook string) {
		cli.setup = setupThen(cli.setup, func(c offline.Config, _ offline.Env) error {
			path := filepath.Join(c.Home, ".gemini", "settings.json")
			var s map[string]any
			data, err := os.ReadFile(path)
			if err == nil {
				err = json.Unmarshal(data, &s)
			}
			if err != nil {
				return err
			}
			s["hooks"] = hookSettings("AfterAgent", hook)
			data, _ = json.Marshal(s)
			return os.WriteFile(path, data, 0o600)
		})
	})
}
