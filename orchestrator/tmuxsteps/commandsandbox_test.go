package tmuxsteps

import (
	"context"
	"errors"
	"testing"

	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// A confined run whose policy runs the project's command refuses before
// any step when the command's sandbox cannot start; with the sandbox off,
// or no command verifier, it goes on.
func TestCheckAgentsRefusesWhenTheCommandSandboxIsMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	withCommand, err := workflows.ParsePolicy("test", []byte("testCommand: \"true\"\nsteps:\n  dev:\n    verifier: command\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = (&Runner{Policy: withCommand}).CheckAgents(context.Background(), nil)
	var b *orchestrator.Blocker
	if !errors.As(err, &b) || b.Code != confine.CodeSandboxUnavailable || b.Action == "" {
		t.Fatalf("confined, no bwrap: %v, want a %s blocker with its action", err, confine.CodeSandboxUnavailable)
	}
	if err := (&Runner{Policy: withCommand, Unconfined: true}).CheckAgents(context.Background(), nil); err != nil {
		t.Fatalf("sandbox off: %v", err)
	}
	if err := (&Runner{Policy: workflows.DefaultPolicy()}).CheckAgents(context.Background(), nil); err != nil {
		t.Fatalf("no command verifier: %v", err)
	}
	if got := (&Runner{Network: []string{"registry.npmjs.org"}}).commandSandbox(); got.Off || !got.Network {
		t.Fatalf("hosts allowed: %+v, want confined with the network", got)
	}
	if got := (&Runner{Unconfined: true}).commandSandbox(); !got.Off {
		t.Fatalf("sandbox off: %+v", got)
	}
}
