package modelsim_test

import (
	"testing"

	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

// copilotOffline points GitHub Copilot CLI 1.0.102 at model-sim in BYOK
// mode: no GitHub sign-in, the OpenAI Responses wire API, a private home
// (docs/agents.md has what was measured).
func copilotOffline(c offline.Config) (offline.Env, error) {
	return offline.Env{
		Set: map[string]string{"HOME": c.Home, "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
			"COPILOT_PROVIDER_BASE_URL": c.BaseURL + "/v1", "COPILOT_PROVIDER_WIRE_API": "responses",
			"COPILOT_PROVIDER_API_KEY": offline.APIKey, "COPILOT_MODEL": "gpt-5.4"},
		Unset: []string{"COPILOT_HOME", "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_TYPE",
			"COPILOT_PROVIDER_BEARER_TOKEN", "COPILOT_PROVIDER_API_KEY_COMMAND", "COPILOT_ALLOW_ALL", "XDG_CACHE_HOME"},
	}, nil
}

var copilotCLI = agentCLI{"copilot", copilotOffline, func(p string) []string { return []string{"-p", p, "--allow-all-tools"} }}

// Copilot's shell is its "bash" function tool; the call model-sim makes on
// it runs and its answer ends the turn.
func TestE2ECopilotRunsOneScriptedToolCallThatWritesAFile(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, proofScript)
	dir := t.TempDir()
	run := runAgent(t, copilotCLI, offline.Config{}, srv, dir, "Write the proof file.")
	checkProof(t, srv, dir, run, modelsim.ProtocolOpenAI)
	for _, e := range srv.Exchanges() {
		if e.Path != "/v1/responses" {
			t.Errorf("exchange %d: %s %s, want POST /v1/responses", e.Seq, e.Method, e.Path)
		}
	}
}
