package agent

import (
	"strings"
	"testing"
)

func TestProfilesNameTheirScreenHeuristic(t *testing.T) {
	if p, _ := LookupProfile(AgentClaude); p.Screen != ScreenTurnSummary {
		t.Fatalf("claude: %+v", p)
	}
	if p, _ := LookupProfile(AgentCodex); p.Screen != "" {
		t.Fatalf("codex exits when done: %+v", p)
	}
}

// The agent lists commands offer come from the table, so a new agent is one entry.
func TestAgentListsComeFromTheTable(t *testing.T) {
	if got := strings.Join(RunAgents(), ","); got != "claude,codex,copilot,gemini,opencode,sim" {
		t.Errorf("RunAgents = %s", got)
	}
	if got := strings.Join(CLIAgents(), ","); got != "claude,codex,copilot,gemini,opencode" {
		t.Errorf("CLIAgents = %s", got)
	}
	// OpenCode has no hook that holds a session's stop (docs/agents.md).
	if got := strings.Join(HookProviders(), ","); got != "claude,codex,copilot,gemini" {
		t.Errorf("HookProviders = %s, want every CLI agent but opencode", got)
	}
}
