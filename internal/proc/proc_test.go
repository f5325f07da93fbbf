package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestProcessAliveSeesExitedAndZombieProcesses(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process counts as dead")
	}
	if Alive(0) || Alive(-1) {
		t.Fatal("non-pids count as alive")
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Not yet waited for: once it has exited it is a zombie, and must count as dead.
	deadline := time.Now().Add(5 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatal("a zombie still counts as alive")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Wait()
	if Alive(pid) {
		t.Fatal("a reaped process counts as alive")
	}
}

func TestLockHeldSeesAFlockWithoutCreatingTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.lock")
	if LockHeld(path) {
		t.Fatal("a missing lock file is held")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the probe created the lock file: %v", err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if LockHeld(path) {
		t.Fatal("an unlocked file is held")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if !LockHeld(path) {
		t.Fatal("a flocked file is not held")
	}
}

func TestProcessIsTellsAReusedPidFromTheOwner(t *testing.T) {
	pid := os.Getpid()
	start, ok := Start(pid)
	if !ok || start == 0 {
		t.Fatalf("start of this process: %d %v", start, ok)
	}
	if !Is(pid, start) || !Is(pid, 0) {
		t.Fatal("this process is not itself")
	}
	if Is(pid, start+1) {
		t.Fatal("a process that started at another time passes for this one")
	}
}
