package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO where a regular file belongs is refused at once, for reading and
// for appending; a regular file opens as usual.
func TestOpenRegularRefusesAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "marker")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_APPEND | os.O_CREATE} {
		if f, err := OpenRegular(fifo, flag, 0o600); !errors.Is(err, ErrNotRegular) {
			if f != nil {
				f.Close()
			}
			t.Fatalf("flag %d: %v, want ErrNotRegular", flag, err)
		}
	}
	if _, err := OpenRegular(dir, os.O_RDONLY, 0); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("a directory: %v", err)
	}
	reg := filepath.Join(dir, "file")
	if err := os.WriteFile(reg, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenRegular(reg, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
