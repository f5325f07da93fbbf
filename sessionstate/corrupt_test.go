package sessionstate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// corruptFiles lists the files a session's state was moved aside to.
func corruptFiles(t *testing.T, dir, name string) []string {
	t.Helper()
	m, err := filepath.Glob(StatePath(dir, name) + ".corrupt-*")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAReaderMovesACorruptSessionStateAsideAndGoesOn(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	for name, write := range map[string]func(p string) error{
		"garbage":  func(p string) error { return os.WriteFile(p, []byte("{\"name\": \"sa-x\", lifecy"), 0o600) },
		"not-json": func(p string) error { return os.WriteFile(p, []byte("\x00\x00\x00"), 0o600) },
		"too-large": func(p string) error {
			return os.WriteFile(p, []byte("\""+strings.Repeat("a", maxSessionBytes)+"\""), 0o600)
		},
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"symlink": func(p string) error { return os.Symlink("/etc/hostname", p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := StatePath(dir, "sa-x")
			if err := write(p); err != nil {
				t.Fatal(err)
			}
			st, err := Reconcile(dir, "sa-x", now, func(int) bool { return true })
			var moved *MovedAside
			if st != nil || !errors.As(err, &moved) || !errors.Is(err, ErrNotFound) {
				t.Fatalf("Reconcile = %+v, %v; want a MovedAside that reads as not found", st, err)
			}
			want := p + ".corrupt-20260506T070809Z"
			if moved.To != want || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "corrupt") {
				t.Fatalf("moved to %q, message %q; want %s named", moved.To, err, want)
			}
			if _, err := os.Lstat(want); err != nil {
				t.Fatalf("the corrupt file is not kept: %v", err)
			}
			if _, err := Read(dir, "sa-x"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("after the move a read says %v, want not found", err)
			}
		})
	}
}

func TestAWriterNeverWritesOverACorruptState(t *testing.T) {
	dir := t.TempDir()
	p := StatePath(dir, "sa-x")
	if err := os.WriteFile(p, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := StampCompletion(dir, "sa-x", time.Unix(1_800_000_000, 0), "done"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a stamp over a corrupt state: %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != "not json" {
		t.Fatalf("the state now holds %q", data)
	}
	// Once a reader has moved it aside, the session's writers start afresh.
	if _, err := Reconcile(dir, "sa-x", time.Now(), func(int) bool { return true }); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if st, err := StampCompletion(dir, "sa-x", time.Unix(1_800_000_000, 0), "done"); err != nil || st.Completion.Turns != 1 {
		t.Fatalf("stamp after the move: %+v %v", st, err)
	}
	if files := corruptFiles(t, dir, "sa-x"); len(files) != 1 {
		t.Fatalf("corrupt copies %v", files)
	}
}

func TestAReadableSessionStateIsNeverMovedAside(t *testing.T) {
	dir := t.TempDir()
	if _, err := Update(dir, "sa-x", func(st *State) error { st.Lifecycle = LifecycleStarted; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOrMoveAside(dir, "sa-x", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOrMoveAside(dir, "sa-y", time.Now()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a missing state: %v", err)
	}
	var moved *MovedAside
	if _, err := ReadOrMoveAside(dir, "sa-y", time.Now()); errors.As(err, &moved) {
		t.Fatal("a missing state was reported moved aside")
	}
	if files := corruptFiles(t, dir, "sa-x"); len(files) != 0 {
		t.Fatalf("moved aside: %v", files)
	}
}
