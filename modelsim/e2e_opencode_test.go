package modelsim_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// opencodeOffline gives OpenCode 1.18.33 a private home whose config names
// a provider of its own on model-sim's Anthropic Messages endpoint
// (docs/agents.md has what was measured).
func opencodeOffline(c offline.Config) (offline.Env, error) {
	config := map[string]any{
		"autoupdate": false, "share": "disabled", "model": "sim/model-sim",
		"provider": map[string]any{"sim": map[string]any{
			"npm": "@ai-sdk/anthropic", "name": "model-sim",
			"options": map[string]any{"baseURL": c.BaseURL + "/v1", "apiKey": offline.APIKey},
			"models": map[string]any{"model-sim": map[string]any{"name": "model-sim", "tool_call": true,
				"limit": map[string]any{"context": 200000, "output": 32000}}},
		}},
	}
	data, err := json.Marshal(config)
	if err != nil {
		return offline.Env{}, err
	}
	dir := filepath.Join(c.Home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return offline.Env{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), data, 0o600); err != nil {
		return offline.Env{}, err
	}
	return offline.Env{
		Set: map[string]string{"HOME": c.Home, "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1"},
		Unset: []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "OPENCODE_CONFIG",
			"OPENCODE_CONFIG_DIR", "OPENCODE_CONFIG_CONTENT", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"},
	}, nil
}

var opencodeCLI = agentCLI{"opencode", opencodeOffline, func(p string) []string { return []string{"run", "--auto", p} }}

// OpenCode's own provider on model-sim's Anthropic endpoint: one shell call
// writes the file and the next answer ends the run.
func TestE2EOpenCodeRunsOneScriptedToolCallThatWritesAFile(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, proofScript)
	dir := t.TempDir()
	// OpenCode takes its folder from $PWD, not from the process's working
	// directory: without this its tools ran in the test's package folder.
	run := runAgent(t, opencodeCLI, offline.Config{}, srv, dir, "Write the proof file.", "PWD="+dir)
	checkProof(t, srv, dir, run, modelsim.ProtocolAnthropic)
}
