package loop

import (
	"strings"
	"testing"
)

func TestLoopStartTellsWhenClaudeCodesBlockCapEndsItSooner(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if w := BlockCapWarning(9, getenv); w != "" {
		t.Fatalf("9 iterations fit under the default cap of 8 blocks: %q", w)
	}
	w := BlockCapWarning(20, getenv)
	if !strings.Contains(w, "ends after 9 iterations, not 20") || !strings.Contains(w, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=19") {
		t.Fatalf("warning %q", w)
	}
	if w := BlockCapWarning(20, func(k string) string { return map[string]string{"CODEX_THREAD_ID": "t"}[k] }); w != "" {
		t.Fatalf("a loop owned by a Codex session was warned of Claude's cap: %q", w)
	}
	env["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"] = "30"
	if w := BlockCapWarning(20, getenv); w != "" {
		t.Fatalf("a raised cap still warned: %q", w)
	}
}
