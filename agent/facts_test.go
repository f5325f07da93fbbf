package agent

import (
	"slices"
	"testing"
)

func TestStateHomeFollowsTheProfilesVariable(t *testing.T) {
	env := map[string]string{"HOME": "/h"}
	getenv := func(k string) string { return env[k] }
	codex, _ := LookupProfile(AgentCodex)
	if got := codex.StatePath("auth.json", getenv); got != "/h/.codex/auth.json" {
		t.Fatalf("default %s", got)
	}
	env["CODEX_HOME"] = "/c"
	if got := codex.StatePath("auth.json", getenv); got != "/c/auth.json" {
		t.Fatalf("CODEX_HOME %s", got)
	}
	claude, _ := LookupProfile(AgentClaude)
	if got := claude.StatePath(claude.TrustFile, getenv); got != "/h/.claude.json" {
		t.Fatalf("~/ is HOME: %s", got)
	}
}

func TestEveryAgentsSessionVariablesAreKnown(t *testing.T) {
	for _, v := range []string{"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "COPILOT_AGENT_SESSION_ID"} {
		if !slices.Contains(SessionVars(), v) {
			t.Errorf("%s is not a session variable", v)
		}
	}
	if DefaultAgent() != AgentClaude || OrList(RunAgents()) != "claude, codex, copilot, gemini, opencode or sim" {
		t.Fatalf("%q %q", DefaultAgent(), OrList(RunAgents()))
	}
}
