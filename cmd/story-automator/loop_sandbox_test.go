package main

import (
	"strings"
	"testing"
)

// `loop start` says whether the session it drives is sandboxed, from the
// variables the session's CLI sets in its sandbox, and how to turn it on.
func TestLoopStartSaysWhetherTheSessionIsSandboxed(t *testing.T) {
	cases := []struct {
		env      map[string]string
		confined any
		note     string
	}{
		{map[string]string{"CLAUDE_CODE_SESSION_ID": "s1", "SANDBOX_RUNTIME": "1"}, true, "sandboxed"},
		{map[string]string{"CLAUDE_CODE_SESSION_ID": "s1"}, false, "/sandbox"},
		{map[string]string{"CODEX_THREAD_ID": "t1", "CODEX_SANDBOX_NETWORK_DISABLED": "1"}, true, "sandboxed"},
		{map[string]string{"CODEX_THREAD_ID": "t1"}, false, "--sandbox workspace-write"},
		{map[string]string{}, nil, "cannot tell"},
	}
	for _, c := range cases {
		out, code := loopRun(t, t.TempDir(), c.env, "", "loop", "start", "fix the tests", "--owner-session", "o1")
		sb, _ := out["sessionSandbox"].(map[string]any)
		if code != 0 || sb == nil || sb["confined"] != c.confined || !strings.Contains(sb["note"].(string), c.note) {
			t.Errorf("env %v: exit %d %v, want confined %v and a note with %q", c.env, code, out["sessionSandbox"], c.confined, c.note)
		}
	}
}
