package tmux_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRealServerLifecycle(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Client(t)
	ctx := context.Background()
	if err := c.CheckVersion(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.HasSession(ctx, "one"); err != nil || ok {
		t.Fatalf("before start: %v %v", ok, err)
	}
	dir := t.TempDir()
	got := filepath.Join(dir, "got")
	// The argument ending in ';' would be a tmux separator; here it is not
	// user text, so use a harmless one and check argv arrives as given.
	pane, err := c.NewSession(ctx, tmux.NewSessionSpec{Name: "one", Width: 120, Height: 30,
		Argv: []string{"/bin/sh", "-c", `printf '%s|%s' "$1" "$2" > "$3.tmp" && mv "$3.tmp" "$3"; exec cat`, "sh", "a b", "$(x) `y`", got}})
	if err != nil {
		t.Fatal(err)
	}
	if !tmux.ValidPaneID(pane) {
		t.Fatalf("pane id %q", pane)
	}
	// The shell renames the file into place once written, so it is whole when seen.
	waitFor(t, "argv file", func() bool { _, err := os.Stat(got); return err == nil })
	b, _ := os.ReadFile(got)
	if string(b) != "a b|$(x) `y`" {
		t.Fatalf("argv arrived as %q", b)
	}
	if _, err := c.NewSession(ctx, tmux.NewSessionSpec{Name: "one", Argv: []string{"/bin/cat"}}); !errors.Is(err, tmux.ErrDuplicateSession) {
		t.Fatalf("duplicate: %v", err)
	}
	// A prefix of the name must not match: targets are exact.
	if ok, _ := c.HasSession(ctx, "on"); ok {
		t.Fatal("prefix matched a session")
	}
	text := "hello; $(rm -rf /) `id` ünï\n"
	if err := c.Paste(ctx, "one", "sa-test-buf", text); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pasted text on screen", func() bool {
		s, _ := c.CapturePane(ctx, "one", 0)
		return strings.Contains(s, "hello; $(rm -rf /) `id` ünï")
	})
	panes, err := c.ListPanes(ctx)
	if err != nil || len(panes) != 1 || panes[0].Session != "one" || panes[0].PaneID != pane {
		t.Fatalf("panes %+v %v", panes, err)
	}
	if err := c.KillSession(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if err := c.KillSession(ctx, "one"); !errors.Is(err, tmux.ErrNoSession) && !errors.Is(err, tmux.ErrNoServer) {
		t.Fatalf("kill twice: %v", err)
	}
}

func TestNoServerIsClassified(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Client(t)
	_, err := c.CapturePane(context.Background(), "nothing", 0)
	if !errors.Is(err, tmux.ErrNoServer) {
		t.Fatalf("got %v", err)
	}
}

// A viewer's capture keeps the pane's colours as escape sequences (the
// plain one does not), and with lines reaches into the scrollback.
func TestCapturePaneColorsKeepsColoursAndScrollback(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Client(t)
	ctx := context.Background()
	_, err := c.NewSession(ctx, tmux.NewSessionSpec{Name: "c", Width: 80, Height: 10,
		Argv: []string{"/bin/sh", "-c", `i=1; while [ $i -le 30 ]; do echo "line $i"; i=$((i+1)); done; printf '\033[31mred\033[0m\n'; exec cat`}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the red line", func() bool {
		s, _ := c.CapturePane(ctx, "c", 0)
		return strings.Contains(s, "red")
	})
	plain, _ := c.CapturePane(ctx, "c", 0)
	screen, err := c.CapturePaneColors(ctx, "c", 0)
	if err != nil || strings.Contains(plain, "\x1b[") || !strings.Contains(screen, "\x1b[31mred") || strings.Contains(screen, "line 1\n") {
		t.Fatalf("plain %q\ncoloured %q (%v)", plain, screen, err)
	}
	if all, err := c.CapturePaneColors(ctx, "c", 100); err != nil || !strings.Contains(all, "line 1\n") || !strings.Contains(all, "\x1b[31mred") {
		t.Fatalf("with the scrollback %q (%v)", all, err)
	}
}
