package realagent

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindPrefersThePinnedInstall(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "node_modules", ".bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "fakecli"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STORY_AUTOMATOR_AGENTS_DIR", dir)
	t.Setenv("PATH", t.TempDir())
	if got, want := Find("fakecli"), filepath.Join(bin, "fakecli"); got != want {
		t.Fatalf("Find = %q, want %q", got, want)
	}
	if got := Find("othercli"); got != "" {
		t.Fatalf("Find(othercli) = %q, want none", got)
	}
}
