package dashboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// deferredSource is a project whose deferred-work.md holds text, on a tmux
// socket no server listens on.
func deferredSource(t *testing.T, text string) Source {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "_bmad-output/implementation-artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deferred-work.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Source{Root: root, Getenv: func(string) string { return "" }, Now: time.Now,
		Socket: fmt.Sprintf("sa-test-none-%d", os.Getpid())}
}

// 5 shows the open items of the project's deferred-work.md, read as the
// `deferred` command reads them: a done item is not among them.
func TestDeferredViewShowsTheOpenItems(t *testing.T) {
	src := deferredSource(t, "- source_spec: `_bmad-output/implementation-artifacts/spec-1-1-a.md`\n  summary: Cache key omits the locale\n"+
		"  evidence: two locales share one entry\n  location: cache/keys.go:12\n  severity: high\n"+
		"- source_spec: `none`\n  summary: Split the settings page\n  evidence: too big\n  done: 0123abc\n")
	snap := src.Load(context.Background())
	m := New(src, Controls{}, false).WithSnapshot(snap, 100, 24)
	m, _ = press(t, m, "5")
	if m.view != viewDeferred {
		t.Fatalf("5 shows view %d", m.view)
	}
	frame := ansi.Strip(m.Render())
	for _, want := range []string{"1 open deferred item(s) · _bmad-output/implementation-artifacts/deferred-work.md",
		"Cache key omits the locale", "cache/keys.go:12", "spec-1-1-a.md", snap.Deferred[0].ID} {
		if !strings.Contains(frame, want) {
			t.Fatalf("no %q in:\n%s", want, frame)
		}
	}
	if strings.Contains(frame, "Split the settings page") {
		t.Fatalf("a done item is shown:\n%s", frame)
	}
}

// A deferred-work.md that cannot be read says so, with its line.
func TestDeferredViewSaysWhyTheFileCannotBeRead(t *testing.T) {
	src := deferredSource(t, "- source_spec: `x`\n  summary: one\n  summary: two\n")
	m := New(src, Controls{}, false).WithSnapshot(src.Load(context.Background()), 120, 24)
	m, _ = press(t, m, "5")
	frame := ansi.Strip(m.Render())
	if !strings.Contains(frame, "deferred-work.md cannot be read") || !strings.Contains(frame, "line 3") {
		t.Fatalf("frame:\n%s", frame)
	}
}
