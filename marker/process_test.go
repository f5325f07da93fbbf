package marker

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestProcessAliveSeesExitedAndZombieProcesses(t *testing.T) {
	if !ProcessAlive(os.Getpid()) {
		t.Fatal("this process counts as dead")
	}
	if ProcessAlive(0) || ProcessAlive(-1) {
		t.Fatal("non-pids count as alive")
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Not yet waited for: once it has exited it is a zombie, and must count as dead.
	deadline := time.Now().Add(5 * time.Second)
	for ProcessAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatal("a zombie still counts as alive")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Wait()
	if ProcessAlive(pid) {
		t.Fatal("a reaped process counts as alive")
	}
}
