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
	os.Symlink(filepath.Join(dir, "target"), p)
	if _, err := Acquire(context.Background(), p, time.Second); err == nil {
		t.Fatal("symlinked lock file accepted")
	}
}

func TestAcquireHonoursContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	release, _ := Acquire(context.Background(), p, time.Second)
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
	os.WriteFile(target, nil, 0o600)
	p := filepath.Join(dir, "x.lock")
	os.Symlink(target, p)
	// Open directly as Acquire would after its Lstat: the flag alone refuses.
	fl := newLock(p)
	if ok, err := fl.TryLock(); err == nil || ok {
		t.Fatalf("a symlinked lock file was opened: %v %v", ok, err)
	}
}
