package monitor

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/sessionstate"
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

// A monitor watches its session's lock file: every update of the state
// closes it, and no other session's writes reach it (the directory watch
// woke all n monitors for each of n children ending at once).
func TestOnlyTheSessionsOwnUpdatesReachItsLockWatch(t *testing.T) {
	dir := t.TempDir()
	update := func(name string) {
		t.Helper()
		if _, err := sessionstate.Update(dir, name, func(st *sessionstate.State) error {
			st.Lifecycle = sessionstate.LifecycleStarted
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	update("sa-x") // the spawner's first write creates the lock file
	fd, err := inotifyOnLock(sessionstate.StatePath(dir, "sa-x") + ".lock")
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	// The kernel queues the events before the writing call returns.
	pending := func() bool {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	update("other")
	if err := os.WriteFile(filepath.Join(dir, "sa-x.log"), []byte("output"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pending() {
		t.Error("another session's update or the output log reached the watch")
	}
	update("sa-x")
	if !pending() {
		t.Error("the session's own update did not reach the watch")
	}
	if err := os.Remove(sessionstate.StatePath(dir, "sa-x") + ".lock"); err != nil {
		t.Fatal(err)
	}
	if !pending() {
		t.Error("removing the session's files did not reach the watch")
	}
}

func TestWakeupsFireOnAnUpdateUnderTheLock(t *testing.T) {
	dir := t.TempDir()
	write := func() {
		if _, err := sessionstate.Update(dir, "sa-x", func(st *sessionstate.State) error {
			st.Lifecycle = sessionstate.LifecycleExited
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	write()
	w := newWakeups()
	defer w.Close()
	if err := w.watchStateFile(dir, sessionstate.StatePath(dir, "sa-x")); err != nil {
		t.Fatal(err)
	}
	write()
	select {
	case <-w.C:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up for an update of the state")
	}
}
