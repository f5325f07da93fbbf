package hooks

import (
	"context"
	"errors"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
)

// The providers come from the agent profile table, in status order.
func TestProvidersComeFromTheProfileTable(t *testing.T) {
	got := Providers()
	if len(got) != 4 || got[0] != Claude || got[1] != Codex || got[2] != Copilot || got[3] != Gemini {
		t.Fatalf("providers %v", got)
	}
	if s := providerList(); s != "claude, codex, copilot or gemini" {
		t.Fatalf("provider list %q", s)
	}
}

// A bad provider is a usage error (exit 2); an unknown binary path is an
// operation failure naming the code the command prints.
func TestApplyRefusalsCarryTheirCodeAndExit(t *testing.T) {
	e := Env{ProjectRoot: t.TempDir(), Getenv: func(string) string { return "" },
		Exe: func() (string, error) { return "", errors.New("no exe") }}
	_, err := Apply(context.Background(), e, Change{Provider: "vim", Scope: "project", Install: true})
	var se *coded.Error
	if !errors.As(err, &se) || se.Exit != coded.ExitUsage || se.Code != "usage_error" {
		t.Fatalf("bad provider: %v", err)
	}
	_, err = Apply(context.Background(), e, Change{Provider: "claude", Scope: "project", Install: true})
	if !errors.As(err, &se) || se.Exit != coded.ExitFailed || se.Code != "binary_path" {
		t.Fatalf("no binary: %v", err)
	}
}
