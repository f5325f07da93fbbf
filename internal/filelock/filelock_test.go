package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAcquireExcludesAndHandsOver(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	release, err := Acquire(context.Background(), p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file mode %v", fi.Mode())
	}
	if _, err := Acquire(context.Background(), p, 20*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("second holder got %v, want ErrTimeout", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := Acquire(context.Background(), p, time.Minute)
		if err == nil {
			r()
		}
		got <- err
	}()
	release() // the queued waiter is woken by the release, not by a poll
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	// The waiter that timed out above must not keep the lock once it gets it.
	r, err := Acquire(context.Background(), p, 5*time.Second)
	if err != nil {
		t.Fatalf("lock left held by an abandoned waiter: %v", err)
	}
	r()
}

func TestAcquireRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.lock")
	if err := os.Symlink(filepath.Join(dir, "target"), p); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(context.Background(), p, time.Second); err == nil {
		t.Fatal("symlinked lock file accepted")
	}
}

func TestAcquireHonoursContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	release, err := Acquire(context.Background(), p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Acquire(ctx, p, time.Minute); !errors.Is(err, ErrTimeout) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

func TestAcquireNeverFollowsASymlinkEvenPastTheCheck(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "x.lock")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	// The open itself refuses: there is no separate check to race.
	if f, err := open(p); err == nil {
		f.Close()
		t.Fatal("a symlinked lock file was opened")
	}
}

// A waiter abandoned by its context must neither keep the lock nor touch the
// path again: its directory can be removed at once (the flake this fixes was
// a reopen with O_CREATE racing the test's temp-dir cleanup).
func TestAbandonedWaiterReleasesWithoutReopening(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.lock")
	release, err := Acquire(context.Background(), p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Acquire(ctx, p, time.Minute)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, ErrTimeout) {
		t.Fatalf("cancelled wait: %v", err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	release()
	// Whatever the abandoned waiter does now, it must not re-create the path.
	r, err := Acquire(context.Background(), filepath.Join(dir, "other.lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("the lock path was re-created: %v", err)
	}
}
