package dirwatch

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAWriteInAWatchedDirectoryWakes(t *testing.T) {
	dir := t.TempDir()
	w, err := Watch(dir, filepath.Join(dir, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := os.OpenFile(filepath.Join(dir, "journal"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("one line\n")
	<-w.C // an append wakes the waiter; the test's deadline bounds a lost event
}
