package realagent

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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

// A program left running from a test's directory is stopped when the test ends.
func TestStopStraysKillsWhatATestLeftRunning(t *testing.T) {
	dir := t.TempDir()
	sleep := filepath.Join(dir, "bin", "daemon")
	if err := os.MkdirAll(filepath.Dir(sleep), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Skip("no /bin/sleep")
	}
	if err := os.WriteFile(sleep, src, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sleep, "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	elsewhere := exec.Command("/bin/sleep", "600") // not under dir: left alone
	if err := elsewhere.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = elsewhere.Process.Kill(); _ = elsewhere.Wait() }()
	t.Run("a test that leaves a daemon", func(t *testing.T) { StopStrays(t, dir) })
	if err := cmd.Wait(); err == nil {
		t.Fatal("the daemon exited on its own; want it killed")
	}
	if err := elsewhere.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("a process outside the directory was stopped: %v", err)
	}
}
