package child

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/agent"
)

// fakeCLI puts an executable named name on a fresh PATH that prints out for --version.
func fakeCLI(t *testing.T, name, out string) []string {
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' '" + out + "'\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir}
}

func TestCheckAgent(t *testing.T) {
	ctx := context.Background()
	if _, _, err := CheckAgent(ctx, agent.AgentClaude, []string{"PATH=" + t.TempDir()}); err == nil {
		t.Fatal("a missing claude passed")
	} else if ae, ok := AsAgentError(err); !ok || ae.Code != CodeAgentNotFound || ae.Action == "" {
		t.Fatalf("missing claude: %v", err)
	}
	if _, v, err := CheckAgent(ctx, agent.AgentClaude, fakeCLI(t, "claude", "2.1.328 (Claude Code)")); err != nil || v != "2.1.328" {
		t.Fatalf("claude 2.1.328: %q %v", v, err)
	}
	if _, _, err := CheckAgent(ctx, agent.AgentClaude, fakeCLI(t, "claude", "2.0.99 (Claude Code)")); err == nil {
		t.Fatal("claude 2.0.99 passed")
	} else if ae, _ := AsAgentError(err); ae == nil || ae.Code != CodeAgentUnsupported {
		t.Fatalf("claude 2.0.99: %v", err)
	}
	if _, v, err := CheckAgent(ctx, agent.AgentCodex, fakeCLI(t, "codex", "codex-cli 0.170.2")); err != nil || v != "0.170.2" {
		t.Fatalf("codex 0.170.2: %q %v", v, err)
	}
	if _, _, err := CheckAgent(ctx, agent.AgentGemini, fakeCLI(t, "gemini", "not a version")); err == nil {
		t.Fatal("a CLI that does not say its version passed")
	}
	if _, _, err := CheckAgent(ctx, agent.AgentSim, nil); err != nil {
		t.Fatalf("sim: %v", err)
	}
}

// An npm-installed CLI's version comes from its package.json, without
// starting it (a Node CLI can take seconds to answer --version).
func TestCheckAgentReadsTheNpmPackageVersion(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "node_modules", "@google", "gemini-cli")
	if err := os.MkdirAll(filepath.Join(pkg, "bundle"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@google/gemini-cli","version":"0.61.3"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The script would say an old version: it must not be asked.
	if err := os.WriteFile(filepath.Join(pkg, "bundle", "gemini.js"), []byte("#!/bin/sh\necho 0.1.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(pkg, "bundle", "gemini.js"), filepath.Join(bin, "gemini")); err != nil {
		t.Fatal(err)
	}
	if _, v, err := CheckAgent(context.Background(), agent.AgentGemini, []string{"PATH=" + bin}); err != nil || v != "0.61.3" {
		t.Fatalf("version %q, %v", v, err)
	}
}
