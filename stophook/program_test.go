package stophook

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The hook runs as story-automator-hook when that sits beside the main
// binary, executable; else as the main binary's stop-hook.
func TestProgramPrefersTheHookBinaryBesideTheMainOne(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "story-automator")
	if got := Program(exe); !reflect.DeepEqual(got, []string{exe, "stop-hook"}) {
		t.Fatalf("alone: %q", got)
	}
	hook := filepath.Join(dir, BinaryName)
	if err := os.WriteFile(hook, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Program(exe); !reflect.DeepEqual(got, []string{exe, "stop-hook"}) {
		t.Fatalf("beside a hook that cannot run: %q", got)
	}
	if err := os.Chmod(hook, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := Program(exe); !reflect.DeepEqual(got, []string{hook}) {
		t.Fatalf("beside the hook: %q", got)
	}
}
