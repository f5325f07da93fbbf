// Package realagent finds the pinned agent CLIs (tools/agents) for tests that
// run the real Claude Code, Codex, Gemini or GitHub Copilot CLI.
package realagent

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/internal/testtier"
)

// InstallCommand is what a developer runs to get the pinned CLIs.
const InstallCommand = "scripts/install-agents.sh"

// BinDir is where scripts/install-agents.sh puts the CLIs' commands:
// $STORY_AUTOMATOR_AGENTS_DIR/node_modules/.bin, by default under the user's cache.
func BinDir() string {
	dir := os.Getenv("STORY_AUTOMATOR_AGENTS_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(cache, "story-automator", "agents")
	}
	return filepath.Join(dir, "node_modules", ".bin")
}

// Find returns the path of the named CLI (claude, codex, gemini, copilot): the pinned
// install first, then PATH; "" when there is none.
func Find(name string) string {
	if d := BinDir(); d != "" {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

// Require returns the path of the named CLI. When it is missing the test is
// skipped with one loud line naming the install command — or failed when
// CI=true, where .ci/run installs the CLIs and a skip would hide a gap.
// Under -short the test is skipped: it is an integration test.
func Require(t testing.TB, name string) string {
	t.Helper()
	testtier.Integration(t)
	if p := Find(name); p != "" {
		return p
	}
	msg := "REAL AGENT MISSING: " + name + " is not installed; run " + InstallCommand + " (needs npm) to run this test"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
