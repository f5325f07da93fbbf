package child

import "testing"

func TestMarkerOwnerIsTheGivenOneElseThisAgentSessionElseTheFirstToStop(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		given string
		set   bool
		env   func(string) string
		owner string
		claim bool
	}{
		{"me", true, env("CLAUDE_CODE_SESSION_ID", "s1"), "me", false},
		{"", true, env("CLAUDECODE", "1"), "", false}, // an empty --owner-session asks for no owner
		{"", false, env("CLAUDE_CODE_SESSION_ID", "s1"), "s1", false},
		{"", false, env("CODEX_THREAD_ID", "t1"), "t1", false},
		{"", false, env("CLAUDECODE", "1"), "", true},
		{"", false, env(), "", false},
	}
	for i, c := range cases {
		owner, claim := MarkerOwner(c.given, c.set, c.env)
		if owner != c.owner || claim != c.claim {
			t.Errorf("case %d: %q %v, want %q %v", i, owner, claim, c.owner, c.claim)
		}
	}
}
