// Package program finds the dashboard's own program beside story-automator
// (and story-automator beside it), without linking the dashboard.
package program

import (
	"os"
	"path/filepath"

	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/internal/coded"
)

// BinaryName is the dashboard's program, installed beside story-automator:
// `story-automator dashboard` replaces itself with it, so the main binary
// links none of the terminal UI libraries (their start-up would be paid by
// every command).
const BinaryName = "story-automator-dashboard"

// MainName is story-automator's own program.
const MainName = "story-automator"

// Path is the dashboard's program beside the story-automator at exe; a
// coded dashboard_missing error says how to install it when it is not there.
func Path(exe string) (string, error) {
	prog := filepath.Join(filepath.Dir(exe), BinaryName)
	fi, err := os.Stat(prog)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return prog, nil
	}
	return "", coded.Fail("dashboard_missing", "the dashboard runs as its own program, %s, and there is none beside %s", BinaryName, exe).
		WithAction("build it with `make build`, or install every program with: " + buildinfo.InstallLine)
}

// Main is story-automator beside the dashboard's program at prog.
func Main(prog string) string { return filepath.Join(filepath.Dir(prog), MainName) }
