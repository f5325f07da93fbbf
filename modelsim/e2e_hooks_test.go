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

func TestE2EClaudeDoesTheIterationAStopHookAsksFor(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, "rules: []\n")
	dir := t.TempDir()
	settings, _ := json.Marshal(map[string]any{"hooks": hookSettings("Stop", blockOnceHook(t))})
	cli := claudeCLI
	cli.argv = func(p string) []string {
		return []string{"-p", "--dangerously-skip-permissions", "--settings", string(settings), p}
	}
	checkTwoIterations(t, srv, dir, runAgent(t, cli, offline.Config{}, srv, dir, loopPrompt))
}

func TestE2ECodexDoesTheIterationAStopHookAsksFor(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, "rules: []\n")
	dir := t.TempDir()
	hook := blockOnceHook(t)
	cli := codexCLI
	cli.setup = func(c offline.Config) (offline.Env, error) {
		env, err := offline.Codex(c)
		if err != nil {
			return env, err
		}
		data, _ := json.Marshal(map[string]any{"hooks": hookSettings("Stop", hook)})
		return env, os.WriteFile(filepath.Join(env.Set["CODEX_HOME"], "hooks.json"), data, 0o600)
	}
	cli.argv = func(p string) []string {
		return []string{"exec", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", p}
	}
	checkTwoIterations(t, srv, dir, runAgent(t, cli, offline.Config{}, srv, dir, loopPrompt))
}

func TestE2EGeminiDoesTheIterationAnAfterAgentHookAsksFor(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, "rules: []\n")
	dir := t.TempDir()
	hook := blockOnceHook(t)
	cli := geminiCLI
	cli.setup = func(c offline.Config) (offline.Env, error) {
		env, err := offline.Gemini(c)
		if err != nil {
			return env, err
		}
		path := filepath.Join(c.Home, ".gemini", "settings.json")
		var s map[string]any
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &s)
		}
		if err != nil {
			return env, err
		}
		s["hooks"] = hookSettings("AfterAgent", hook)
		data, _ = json.Marshal(s)
		return env, os.WriteFile(path, data, 0o600)
	}
	checkTwoIterations(t, srv, dir, runAgent(t, cli, offline.Config{}, srv, dir, loopPrompt))
}
