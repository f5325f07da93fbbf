//go:build darwin || freebsd

package kq

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestAFileRenamedIntoADirectoryWakes(t *testing.T) {
	q, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	dir := t.TempDir()
	if err := q.WatchDir(dir); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(tmp, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "state.json")); err != nil {
		t.Fatal(err)
	}
	if !q.Wait() {
		t.Fatal("no event for a file renamed into the directory")
	}
}

func TestAProcessExitWakesAndAGoneOneSaysSo(t *testing.T) {
	q, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	cmd := exec.Command("sh", "-c", "read x")
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := q.WatchProcess(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	if !q.Wait() {
		t.Fatal("no event for the process's exit")
	}
	cmd.Wait()
	if err := q.WatchProcess(cmd.Process.Pid); err != ErrNoProcess {
		t.Fatalf("a reaped process: %v", err)
	}
}

func TestCloseEndsAWait(t *testing.T) {
	q, err := New()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() { done <- q.Wait() }()
	q.Close()
	if <-done {
		t.Fatal("Wait said an event happened after Close")
	}
}
