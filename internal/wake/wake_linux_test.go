package wake

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/story-automator/story-automator/internal/atomicfile"
	"github.com/story-automator/story-automator/sessionstate"
)

// watchRaw opens an inotify descriptor of its own with a watch as a Waker
// adds it, for tests that read the kernel's batches themselves.
func watchRaw(t *testing.T, path string, mask uint32) (fd, wd int) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	wd, err = unix.InotifyAddWatch(fd, path, mask)
	if err != nil {
		t.Fatal(err)
	}
	return fd, wd
}

// The kernel queues inotify events before the writing call returns, so each
// batch read right after a write holds exactly that write's events.
func TestOnlyTheNamedEntriesWake(t *testing.T) {
	dir := t.TempDir()
	fd, wd := watchRaw(t, dir, dirMask)
	names := map[int][]string{wd: {"sa-x.json"}}
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
		if eventsWake(batch(write), names) {
			t.Errorf("%s woke the waiter", what)
		}
	}
	if !eventsWake(batch(func() error { return atomicfile.Write(filepath.Join(dir, "sa-x.json"), []byte("{}"), 0o600) }), names) {
		t.Error("replacing the named file did not wake the waiter")
	}
	if !eventsWake(batch(func() error { return os.Remove(filepath.Join(dir, "sa-x.json")) }), names) {
		t.Error("deleting the named file did not wake the waiter")
	}
	if !eventsWake(batch(func() error { return os.WriteFile(filepath.Join(dir, "x"), nil, 0o600) }), map[int][]string{wd: nil}) {
		t.Error("a watch of every entry did not wake")
	}
}

// A session's lock file is only ever opened, locked and closed: each update
// of its state closes it, and no other session's writes reach its watch. (A
// watch of the sessions directory woke each of n monitors for each of n
// children ending at once.)
func TestOnlyTheSessionsOwnUpdatesReachItsLockFileWatch(t *testing.T) {
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
	lock := sessionstate.StatePath(dir, "sa-x") + ".lock"
	fd, _ := watchRaw(t, lock, fileMask)
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
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if !pending() {
		t.Error("removing the session's files did not reach the watch")
	}
}

// Close hands the descriptors to the background: a close the kernel makes
// wait (an inotify descriptor's) does not hold up the waiter.
func TestCloseDoesNotWaitForTheKernel(t *testing.T) {
	w := New()
	release := make(chan struct{})
	w.kernel.closeFile = func(f *os.File) {
		<-release // a close the kernel keeps waiting
		f.Close()
	}
	if err := w.Dir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	w.Close() // would never return if it waited for the close
	select {
	case <-w.kernel.closed:
		t.Fatal("closed before the kernel let the close finish")
	default:
	}
	close(release)
	<-w.kernel.closed
}
