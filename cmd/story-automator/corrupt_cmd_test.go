package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/sessionstate"
)

// runWithStderr runs a command in-process against a tmux server that never
// started, returning its JSON, stderr and exit code.
func runWithStderr(t *testing.T, root string, args ...string) (map[string]any, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	s := testStreams(root, &out)
	s.Err = &errb
	code := Run(append([]string{"--tmux-socket", "sa-test-never-started"}, args...), s)
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: stdout is not one JSON object: %q", args, out.String())
	}
	return res, errb.String(), code
}

func TestSessionStatusMovesACorruptStateAsideAndSaysSo(t *testing.T) {
	root := t.TempDir()
	dir := sessionstate.Dir(root, func(string) string { return "" })
	p := sessionstate.StatePath(dir, "sa-broken")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"name": "sa-broken", "lifecycle": "runn`), 0o600); err != nil {
		t.Fatal(err)
	}
	res, stderr, code := runWithStderr(t, root, "session", "status", "sa-broken")
	moved, _ := filepath.Glob(p + ".corrupt-*")
	if len(moved) != 1 {
		t.Fatalf("moved aside: %v", moved)
	}
	warnings, _ := res["warnings"].([]any)
	if code != 1 || res["error"] != "session_not_found" || len(warnings) != 1 ||
		!strings.Contains(warnings[0].(string), "moved it aside to "+moved[0]) {
		t.Fatalf("session status: %d %v", code, res)
	}
	if !strings.Contains(stderr, "warning") || !strings.Contains(stderr, moved[0]) {
		t.Fatalf("stderr %q", stderr)
	}
	// The next reader finds no state and no warning: the file is out of the way.
	res, _, _ = runWithStderr(t, root, "session", "status", "sa-broken")
	if res["warnings"] != nil || res["error"] != "session_not_found" {
		t.Fatalf("second status: %v", res)
	}
}

func TestStatusMovesACorruptStateDocumentAsideAndShowsTheRest(t *testing.T) {
	root := t.TempDir()
	doc := filepath.Join(orchestrator.RunsDir(root), "run-20260101-000000-abcd.md")
	if err := os.MkdirAll(filepath.Dir(doc), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte("# Story run\n\ncut off by a full disk"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, stderr, code := runWithStderr(t, root, "status", "--json")
	moved, _ := filepath.Glob(doc + ".corrupt-*")
	warnings, _ := res["warnings"].([]any)
	if code != 0 || res["run"] != nil || len(moved) != 1 || len(warnings) != 1 ||
		!strings.Contains(warnings[0].(string), "moved it aside to "+moved[0]) || !strings.Contains(stderr, moved[0]) {
		t.Fatalf("status: %d %v (moved %v, stderr %q)", code, res, moved, stderr)
	}
}
