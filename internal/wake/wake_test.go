package wake

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Each test's deadline bounds a wake-up that never comes.

func TestAnAppendInAWatchedDirectoryWakes(t *testing.T) {
	dir := t.TempDir()
	w := New()
	defer w.Close()
	if err := w.Dir(dir); err != nil {
		t.Fatal(err)
	}
	if err := w.Dir(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory was watched")
	}
	f, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("one line\n"); err != nil {
		t.Fatal(err)
	}
	<-w.C
}

func TestAFileRenamedIntoADirectoryWakes(t *testing.T) {
	dir := t.TempDir()
	w := New()
	defer w.Close()
	if err := w.Dir(dir, "state.json"); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(tmp, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "state.json")); err != nil {
		t.Fatal(err)
	}
	<-w.C
}

func TestAWrittenFileWakes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w := New()
	defer w.Close()
	if err := w.File(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	<-w.C
}

func TestAProcessExitWakesAndAGoneOneWakesAtOnce(t *testing.T) {
	w := New()
	defer w.Close()
	cmd := exec.Command("sh", "-c", "read x")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := w.Process(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.C:
		t.Fatal("a wake-up is pending before the process ended")
	default:
	}
	stdin.Close()
	<-w.C
	_ = cmd.Wait()
	gone := New()
	defer gone.Close()
	if err := gone.Process(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	<-gone.C
}

func TestWatchesAfterCloseAreNoOps(t *testing.T) {
	w := New()
	w.Close()
	w.Close()
	if err := w.Dir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := w.Process(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}
