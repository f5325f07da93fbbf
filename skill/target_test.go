package skill

import (
	"errors"
	"os"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
)

// A bad provider is a usage error; a different file in the way a conflict.
func TestTargetRefusalsCarryTheirCode(t *testing.T) {
	root := t.TempDir()
	getenv := func(string) string { return "" }
	_, err := InstallTo(Target{Provider: "vim", Scope: Project, Root: root, Getenv: getenv}, false)
	var se *coded.Error
	if !errors.As(err, &se) || se.Code != "usage_error" || se.Exit != 2 {
		t.Fatalf("bad provider: %v", err)
	}
	tg := Target{Provider: DefaultProvider(), Scope: Project, Root: root, Getenv: getenv}
	r, err := InstallTo(tg, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.Path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := UninstallFrom(tg); !errors.As(err, &se) || se.Code != "skill_conflict" || se.Exit != 1 {
		t.Fatalf("conflict: %v", err)
	}
}
