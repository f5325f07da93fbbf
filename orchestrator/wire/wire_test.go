package wire

import (
	"slices"
	"testing"

	"github.com/story-automator/story-automator/sessionstate"
)

func TestTheMarkersTempFilesAreNeverWhereGitWouldCommitThem(t *testing.T) {
	root := t.TempDir()
	getenv := func(string) string { return "" }
	paths := StatePaths(root, getenv, sessionstate.Dir(root, getenv))
	if want := ".claude/..story-automator-active.tmp-*"; !slices.Contains(paths, want) {
		t.Fatalf("state paths %v lack %s", paths, want)
	}
}
