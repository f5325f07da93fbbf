package tmuxsteps

import (
	"context"
	"errors"
	"slices"
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
	if got := (&Runner{Network: []string{"registry.npmjs.org"}, Exe: "/opt/sa"}).commandSandbox(); got.Off || !slices.Equal(got.Network, []string{"registry.npmjs.org"}) || got.Exe != "/opt/sa" {
		t.Fatalf("hosts allowed: %+v, want confined with the network", got)
	}
	if got := (&Runner{Unconfined: true}).commandSandbox(); !got.Off {
		t.Fatalf("sandbox off: %+v", got)
	}
}

// The command verifier starts from a child's allow-list, not the run's
// whole environment: a notify secret and an unlisted variable stay out, a
// name env.pass lists goes in; the workflow's readDeny reaches it.
func TestTheCommandSandboxGetsTheChildsAllowListAndReadDeny(t *testing.T) {
	pol, err := workflows.ParsePolicy("test", []byte(
		"env: {pass: [JAVA_OPTS]}\nnotify:\n  webhook: \"https://hooks.example/$HOOK_SECRET\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Policy: pol, ReadDeny: []string{"~/.config/rclone"},
		Environ: []string{"PATH=/usr/bin", "HOME=/home/u", "HOOK_SECRET=s1", "AWS_SECRET_ACCESS_KEY=s2", "JAVA_OPTS=-Xmx1g"}}
	sb := r.commandSandbox()
	env := map[string]bool{}
	for _, kv := range sb.Env {
		env[kv] = true
	}
	if !env["PATH=/usr/bin"] || !env["HOME=/home/u"] || !env["JAVA_OPTS=-Xmx1g"] {
		t.Fatalf("env %v lacks the allow-list or env.pass", sb.Env)
	}
	if env["HOOK_SECRET=s1"] || env["AWS_SECRET_ACCESS_KEY=s2"] {
		t.Fatalf("env %v holds a secret", sb.Env)
	}
	if len(sb.ReadDeny) != 1 || sb.ReadDeny[0] != "~/.config/rclone" {
		t.Fatalf("readDeny %v", sb.ReadDeny)
	}
}
