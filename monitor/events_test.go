package monitor

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestProcessGoneSeesExitedAndZombieProcesses(t *testing.T) {
	if processGone(os.Getpid()) {
		t.Fatal("this process counts as gone")
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Not yet waited for: once it has exited it is a zombie, and must count as gone.
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatal("a zombie still counts as running")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Wait()
	if !processGone(pid) {
		t.Fatal("a reaped process counts as running")
	}
}

func TestWakeupsFireOnStateFileAndProcessExit(t *testing.T) {
	dir := t.TempDir()
	w := newWakeups()
	defer w.Close()
	if err := w.watchStateFile(dir, dir+"/sa-x.json"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/other.json", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/sa-x.json", []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up for the state file")
	}
	cmd := exec.Command("/bin/sleep", "0.2")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := w.watchProcess(cmd.Process.Pid); err != nil {
		t.Skipf("pidfd unavailable: %v", err)
	}
	select {
	case <-w.C:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up for the process exit")
	}
	_ = cmd.Wait()
}
