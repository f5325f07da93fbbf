package child

import (
	"testing"

	"github.com/story-automator/story-automator/agent"
)

func TestAgentSessionFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env    map[string]string
		id     string
		inside bool
	}{
		{map[string]string{}, "", false},
		{map[string]string{"CLAUDE_CODE_SESSION_ID": " c1 ", "CODEX_THREAD_ID": "x1"}, "c1", true},
		{map[string]string{"CLAUDE_CODE_SESSION_ID": "  ", "CODEX_THREAD_ID": "x1"}, "x1", true},
		{map[string]string{"CLAUDECODE": "1"}, "", true},
		{map[string]string{"CLAUDECODE": "0"}, "", false},
	} {
		getenv := func(k string) string { return tc.env[k] }
		if got := agent.AgentSessionID(getenv); got != tc.id {
			t.Errorf("%v: id %q, want %q", tc.env, got, tc.id)
		}
		if got := agent.InAgentSession(getenv); got != tc.inside {
			t.Errorf("%v: inside %v, want %v", tc.env, got, tc.inside)
		}
	}
}
