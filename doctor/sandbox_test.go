package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/testtier"
	"github.com/story-automator/story-automator/workflows"
)

// doctor reports, per agent, whether its sandbox works here (a real probe:
// with bubblewrap missing from PATH it fails with the install command) and
// what it allows; workflow.yaml's `sandbox: off` turns a working one into a
// warning; an agent with no sandbox of its own is named unconfined.
func TestSandboxCheckSaysWhetherItWorksHereAndWhatItAllows(t *testing.T) {
	testtier.Integration(t)
	root := t.TempDir()
	empty := t.TempDir()
	o := Options{Root: root, Environ: []string{"PATH=" + empty, "HOME=" + t.TempDir()}}
	ctx := context.Background()
	c := checkSandbox(ctx, agent.AgentClaude, o)
	if c.Status != Fail || !strings.Contains(c.Detail, "bwrap") || !strings.Contains(c.Fix, agent.SandboxInstall) {
		t.Fatalf("claude without bubblewrap: %+v", c)
	}

	var dirs []string
	for _, prog := range []string{"bwrap", "socat"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: .ci/run installs it (%s)", prog, agent.SandboxInstall)
			}
			t.Skipf("%s is not installed", prog)
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	o.Environ = []string{"PATH=" + strings.Join(dirs, ":") + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
	c = checkSandbox(ctx, agent.AgentClaude, o)
	p, _ := agent.LookupProfile(agent.AgentClaude)
	if c.Status != OK || !strings.Contains(c.Detail, p.Sandbox.Allows) ||
		!strings.Contains(c.Detail, "reads: everything but your credentials (~/.ssh") || strings.Contains(c.Detail, "readDeny") {
		t.Fatalf("claude with bubblewrap and socat: %+v", c)
	}
	if err := os.MkdirAll(filepath.Join(root, workflows.StateDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, workflows.PolicyFile), []byte("sandbox: {network: [registry.npmjs.org]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := checkSandbox(ctx, agent.AgentClaude, o); c.Status != Warn || !strings.Contains(c.Detail, "accepts uploads") {
		t.Fatalf("claude with sandbox.network: %+v", c)
	}
	// The workflow's own read denial is named with the credentials.
	if err := os.WriteFile(filepath.Join(root, workflows.PolicyFile), []byte("sandbox: {readDeny: [~/.config/rclone]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := checkSandbox(ctx, agent.AgentClaude, o); c.Status != OK || !strings.Contains(c.Detail, "denied by the CLI's own sandbox and sandbox.readDeny: ~/.config/rclone") {
		t.Fatalf("claude with sandbox.readDeny: %+v", c)
	}
	// A custom command has no sandbox of its own: this tool's confines it.
	if c := checkSandbox(ctx, agent.AgentCustom, o); c.Status != OK ||
		!strings.Contains(c.Detail, "this tool's own sandbox around the whole command works here") ||
		!strings.Contains(c.Detail, "hidden by this tool's bubblewrap") {
		t.Fatalf("custom: %+v", c)
	}
	if err := os.WriteFile(filepath.Join(root, workflows.PolicyFile), []byte("sandbox: off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := checkSandbox(ctx, agent.AgentClaude, o); c.Status != Warn || !strings.Contains(c.Detail, "unconfined") || c.Fix == "" {
		t.Fatalf("claude with sandbox: off: %+v", c)
	}
	if c := checkSandbox(ctx, agent.AgentCustom, o); c.Status != Warn || !strings.Contains(c.Detail, "unconfined") {
		t.Fatalf("custom: %+v", c)
	}
	if c := checkSandbox(ctx, agent.AgentSim, o); c.Status != OK {
		t.Fatalf("sim: %+v", c)
	}
}

// GitHub Copilot CLI and OpenCode run wrapped whole in this tool's
// bubblewrap, their network narrowed by its proxy to their model endpoint
// and the workflow's hosts: doctor says the sandbox works and what it
// lets through, with no warning.
func TestSandboxCheckSaysAWrappedCLIsNetworkIsNarrowed(t *testing.T) {
	testtier.Integration(t)
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap is missing: .ci/run installs it (%s)", agent.SandboxInstall)
		}
		t.Skip("bwrap is not installed")
	}
	o := Options{Root: t.TempDir(), Environ: []string{"PATH=" + filepath.Dir(bwrap) + ":/usr/bin:/bin", "HOME=" + t.TempDir()}}
	for _, name := range []string{agent.AgentCopilot, agent.AgentOpenCode} {
		c := checkSandbox(context.Background(), name, o)
		if c.Status != OK || !strings.Contains(c.Detail, "this tool's own sandbox around the whole command works here") ||
			!strings.Contains(c.Detail, "network: its model endpoint and the sandbox.network hosts only") || c.Fix != "" {
			t.Fatalf("%s: %+v", name, c)
		}
	}
}
