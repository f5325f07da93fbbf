package workflows

import (
	"os"
	"testing"
)

// copyProject copies testdata/project (a realistic BMAD v6 project) into a
// temporary directory and returns its root.
func copyProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/project")); err != nil {
		t.Fatal(err)
	}
	return root
}

// openProject opens a fresh copy of testdata/project.
func openProject(t *testing.T) *Layout {
	t.Helper()
	p, err := Open(copyProject(t))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
