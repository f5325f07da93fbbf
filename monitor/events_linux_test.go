package monitor

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// The kernel queues inotify events before the writing call returns, so each
// batch read right after a write holds exactly that write's events.
func TestOnlyTheSessionsOwnStateFileWakes(t *testing.T) {
	dir := t.TempDir()
	fd, err := inotifyOn(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	batch := func(write func() error) []byte {
		t.Helper()
		if err := write(); err != nil {
			t.Fatal(err)
		}
		n, err := unix.Read(fd, buf)
		if err != nil || n <= 0 {
			t.Fatalf("no events: %d %v", n, err)
		}
		return buf[:n]
	}
	for what, write := range map[string]func() error{
		"another session's file": func() error { return atomicfile.Write(filepath.Join(dir, "other.json"), []byte("{}"), 0o600) },
		"a name it starts with":  func() error { return os.WriteFile(filepath.Join(dir, "sa-x.json.lock"), nil, 0o600) },
		"the output log":         func() error { return os.WriteFile(filepath.Join(dir, "sa-x.log"), []byte("x"), 0o600) },
	} {
		if inotifyWakes(batch(write), "sa-x.json") {
			t.Errorf("%s woke the monitor", what)
		}
	}
	if !inotifyWakes(batch(func() error { return atomicfile.Write(filepath.Join(dir, "sa-x.json"), []byte("{}"), 0o600) }), "sa-x.json") {
		t.Error("replacing the state file did not wake the monitor")
	}
	if !inotifyWakes(batch(func() error { return os.Remove(filepath.Join(dir, "sa-x.json")) }), "sa-x.json") {
		t.Error("deleting the state file did not wake the monitor")
	}
}

func TestWakeupsFireOnStateFileAndProcessExit(t *testing.T) {
	dir := t.TempDir()
	w := newWakeups()
	defer w.Close()
	if err := w.watchStateFile(dir, filepath.Join(dir, "sa-x.json")); err != nil {
		t.Fatal(err)
	}
	// An atomic write renames the file into place: one event for its name,
	// the last of the batch, so nothing of it is left to wake after this one.
	if err := atomicfile.Write(filepath.Join(dir, "sa-x.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up for the state file")
	}
	cmd := exec.Command("/bin/sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if err := w.watchProcess(cmd.Process.Pid); err != nil {
		t.Skipf("pidfd unavailable: %v", err)
	}
	select {
	case <-w.C:
		t.Fatal("a wake-up is pending before the process ended")
	default:
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up for the process exit")
	}
}

// Close hands the descriptors to the background: a close the kernel makes
// wait (an inotify descriptor's) does not hold up the monitor's caller.
func TestWakeupsCloseDoesNotWaitForTheKernel(t *testing.T) {
	dir := t.TempDir()
	w := newWakeups()
	release := make(chan struct{})
	w.closeFile = func(f *os.File) {
		<-release // a close the kernel keeps waiting
		f.Close()
	}
	if err := w.watchStateFile(dir, filepath.Join(dir, "sa-x.json")); err != nil {
		t.Fatal(err)
	}
	w.Close() // would never return if it waited for the close
	select {
	case <-w.closed:
		t.Fatal("closed before the kernel let the close finish")
	default:
	}
	close(release)
	<-w.closed
}
