package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run whose agent CLI is missing, or too old, stops before any step with
// the install command, and leaves the project as it was: no retries on exit 127.
func TestE2ERunWithAMissingOrUnsupportedAgentStopsAtOnce(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	bin := t.TempDir()
	path := "PATH=" + bin + ":/usr/bin:/bin"
	res, code := p.run([]string{path}, "run", "--agent", "claude", "--json")
	if code != 1 || res["error"] != "agent_not_found" || !strings.Contains(stringOr(res["action"]), "npm install -g @anthropic-ai/claude-code") {
		t.Fatalf("missing claude: exit %d %v", code, res)
	}
	old := "#!/bin/sh\necho '1.0.5 (Claude Code)'\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(old), 0o755); err != nil {
		t.Fatal(err)
	}
	res, code = p.run([]string{path}, "run", "--agent", "sim", "--fallback-agent", "claude", "--json")
	if code != 1 || res["error"] != "agent_unsupported" || !strings.Contains(stringOr(res["message"]), "1.0.5") {
		t.Fatalf("old claude as the fallback: exit %d %v", code, res)
	}
	if dirty := p.git("status", "--porcelain", "--untracked-files=all"); dirty != "" {
		t.Fatalf("the refused run left:\n%s", dirty)
	}
	if _, err := os.Stat(filepath.Join(p.root, ".story-automator", "runs")); !os.IsNotExist(err) {
		t.Fatalf("a refused run wrote a state document: %v", err)
	}
}
