package stophook

import (
	"os"
	"path/filepath"
)

// BinaryName is the hook's own program, installed beside story-automator.
const BinaryName = "story-automator-hook"

// Program is the command line that runs the Stop hook of the
// story-automator at exe: the hook's own program beside it when there is
// one (a regular, executable file), else exe's stop-hook. Both run the
// same code; the small program starts faster.
func Program(exe string) []string {
	hook := filepath.Join(filepath.Dir(exe), BinaryName)
	if fi, err := os.Stat(hook); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return []string{hook}
	}
	return []string{exe, "stop-hook"}
}
