package monitor

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

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
