package orchestrator

import (
	"context"
	"testing"
)

// A run started from an agent session's shell is owned by that session when
// the shell says its id; inside one that does not (CLAUDECODE=1 alone), the
// marker asks the first stopping session to claim it; outside any, neither.
func TestTheRunsOwnerComesFromTheAgentSessionItRunsIn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		env   map[string]string
		owner string
		claim bool
	}{
		{"claude with its session id", map[string]string{"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "c-1"}, "c-1", false},
		{"codex thread", map[string]string{"CODEX_THREAD_ID": "x-1"}, "x-1", false},
		{"claude without its session id", map[string]string{"CLAUDECODE": "1"}, "", true},
		{"a terminal", map[string]string{}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, "1-1")
			h.env = tc.env
			o := h.options()
			store := h.store()
			st, _, err := loadOrPlan(store, o, h.deps(), &stateLoader{})
			if err != nil {
				t.Fatal(err)
			}
			if err := claimMarker(context.Background(), store, st, o, h.clock); err != nil {
				t.Fatal(err)
			}
			m, err := store.Read()
			if err != nil {
				t.Fatal(err)
			}
			if m.OwnerSession != tc.owner || m.ClaimOnStop != tc.claim {
				t.Fatalf("owner %q claimOnStop %v, want %q %v", m.OwnerSession, m.ClaimOnStop, tc.owner, tc.claim)
			}
		})
	}
}
