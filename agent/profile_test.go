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
	if got := strings.Join(RunAgents(), ","); got != "claude,codex,copilot,gemini,sim" {
		t.Errorf("RunAgents = %s", got)
	}
	if got := strings.Join(CLIAgents(), ","); got != "claude,codex,copilot,gemini" {
		t.Errorf("CLIAgents = %s", got)
	}
	if got := strings.Join(HookProviders(), ","); got != strings.Join(CLIAgents(), ",") {
		t.Errorf("HookProviders = %s, want every CLI agent", got)
	}
}
