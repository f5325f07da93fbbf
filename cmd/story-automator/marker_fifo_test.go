package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO at the marker path (or at the hook history) hangs nothing: the Stop
// hook allows at once, marker show says marker_corrupt.
func TestAFIFOAtTheMarkerPathHangsNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ".story-automator-active"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	out, code := runHookProcess(t, root, []byte(`{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false}`))
	if code != 0 || out != "" {
		t.Fatalf("stop-hook with a FIFO marker: exit %d stdout %q", code, out)
	}
	res, code := runCLI(t, root, "marker", "show")
	if code != 1 || res["error"] != "marker_corrupt" {
		t.Fatalf("marker show: %d %v", code, res)
	}
}

// In a project with no .claude directory there is no marker to change: the
// marker commands say marker_not_found, not an I/O error.
func TestMarkerCommandsWithoutAClaudeDirSayNotFound(t *testing.T) {
	for _, args := range [][]string{{"marker", "heartbeat"}, {"marker", "pause"}, {"marker", "resume"}, {"marker", "claim", "--owner-session", "me"}} {
		res, code := runCLI(t, t.TempDir(), args...)
		if code != 1 || res["error"] != "marker_not_found" {
			t.Errorf("%v: %d %v", args, code, res)
		}
	}
}

// A blank value of a flag that reaches an agent is refused, not passed on.
func TestBlankAgentFlagsAreRefused(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--agent", "sim", "--model", "   "},
		{"run", "--agent", " "},
		{"session", "spawn", "--step", "dev", "--story", "1.1", "--agent", "sim", "--model", ""},
	} {
		res, code := runCLI(t, t.TempDir(), args...)
		if code != 2 || res["error"] != "invalid_flag" {
			t.Errorf("%v: %d %v", args, code, res)
		}
	}
}
