package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/marker"
)

// placeLoopFile copies a stophook fixture into root/.claude under name.
func placeLoopFile(t *testing.T, root, fixture, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "stophook", "testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoopImportRalph(t *testing.T) {
	root := t.TempDir()
	src := placeLoopFile(t, root, "ralph-loop.local.md", "ralph-loop.local.md")
	out, code := loopRun(t, root, nil, "", "loop", "import", ".claude/ralph-loop.local.md")
	if code != 0 || out["format"] != "ralph" || out["sourceRenamedTo"] != src+".imported" {
		t.Fatalf("%d %v", code, out)
	}
	m := loopMarkerOf(t, root)
	l := m.Loop
	if m.Status != marker.StatusActive || m.OwnerSession != "3b9f2c1e-5a47-4d0b-9c2e-8f1a6d3e4b21" || l.Iteration != 7 || l.MaxIterations != 50 ||
		l.CompletionPromise != "ALL TESTS GREEN" || l.StartedAt != "2026-11-22T09:14:03Z" || l.ImportedFrom != src ||
		!strings.HasPrefix(l.Prompt, "Fix every failing test") {
		t.Fatalf("marker %+v loop %+v", m, l)
	}
	if _, err := os.Stat(src); !os.IsNotExist(err) {
		t.Fatal("the Ralph file must be out of the old hook's sight")
	}
	if _, err := os.Stat(src + ".imported"); err != nil {
		t.Fatal("the Ralph file must be kept, renamed")
	}
}

func TestLoopImportForgeKeepsPauseAndBindsTheTranscriptSession(t *testing.T) {
	root := t.TempDir()
	src := placeLoopFile(t, root, "forge-loop.0320-1430-a3b2.local.md", "forge-loop.0320-1430-a3b2.local.md")
	out, code := loopRun(t, root, nil, "", "loop", "import", src, "--keep-source", "--exit-strategy", "done_signals")
	if code != 0 || out["format"] != "forge" || out["sourceRenamedTo"] != nil {
		t.Fatalf("%d %v", code, out)
	}
	m := loopMarkerOf(t, root)
	if m.Status != marker.StatusPaused || !strings.Contains(m.PauseReason, "paused") || m.OwnerSession != "8d0e6a52-1f3b-4c7e-a9d4-2b5c7e1f0a93" ||
		m.Loop.Iteration != 3 || m.Loop.MaxIterations != 20 || m.Loop.CompletionPromise != "" || m.Loop.ExitStrategy != "done_signals" {
		t.Fatalf("marker %+v loop %+v", m, m.Loop)
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatal("--keep-source must leave the file")
	}
}

func TestLoopImportLimitsAndOverrides(t *testing.T) {
	root := t.TempDir()
	src := placeLoopFile(t, root, "ralph-loop.local.md", "ralph-loop.local.md")
	data, _ := os.ReadFile(src)
	if err := os.WriteFile(src, []byte(strings.Replace(string(data), "max_iterations: 50", "max_iterations: 0", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := loopRun(t, root, map[string]string{"CLAUDE_CODE_SESSION_ID": "env-session"}, "", "loop", "import", src, "--owner-session", "mine", "--completion-promise", "SHIPPED")
	if code != 0 || !strings.Contains(strings.Join(anyStrings(out["warnings"]), "\n"), "no iteration limit") {
		t.Fatalf("%d %v", code, out)
	}
	m := loopMarkerOf(t, root)
	if m.Loop.MaxIterations != marker.DefaultMaxIterations || m.OwnerSession != "mine" || m.Loop.CompletionPromise != "SHIPPED" {
		t.Fatalf("an unlimited source loop must get the default limit; flags win: %+v %+v", m, m.Loop)
	}
}

func TestLoopImportRefusals(t *testing.T) {
	root := t.TempDir()
	loopRun(t, root, nil, "", "loop", "start", "already running", "--owner-session", "o")
	src := placeLoopFile(t, root, "ralph-loop.local.md", "ralph-loop.local.md")
	out, code := loopRun(t, root, nil, "", "loop", "import", src)
	if code != 1 || out["error"] != "loop_active" {
		t.Fatalf("import over a loop: %d %v", code, out)
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatal("a refused import must leave the source file in place")
	}
	if loopMarkerOf(t, root).Loop.Prompt != "already running" {
		t.Fatal("a refused import changed the running loop")
	}
	bad := filepath.Join(root, "notes.md")
	if err := os.WriteFile(bad, []byte("no frontmatter here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := loopRun(t, t.TempDir(), nil, "", "loop", "import", bad); code != 1 || out["error"] != "import_invalid" {
		t.Fatalf("invalid file: %d %v", code, out)
	}
	if out, code := loopRun(t, t.TempDir(), nil, "", "loop", "import", filepath.Join(root, "missing.md")); code != 1 || out["error"] != "import_unreadable" {
		t.Fatalf("missing file: %d %v", code, out)
	}
}

func TestLoopImportRefusesAnAdvisorSlowerThanTheHook(t *testing.T) {
	root := t.TempDir()
	src := placeLoopFile(t, root, "ralph-loop.local.md", "ralph-loop.local.md")
	out, code := loopRun(t, root, nil, "", "loop", "import", src, "--advisor", "./predict.sh", "--advisor-timeout", "1m")
	if code != 2 || out["error"] != "usage_error" || !strings.Contains(fmt.Sprint(out["message"]), "hook") {
		t.Fatalf("%d %v", code, out)
	}
	if _, err := os.Stat(src); err != nil {
		t.Fatal("a refused import must leave the source in place")
	}
	if _, err := os.Stat(marker.ResolvePath(root, func(string) string { return "" })); err == nil {
		t.Fatal("a refused import wrote a marker")
	}
}
