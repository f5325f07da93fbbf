package child

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

func TestSpawnFailureKeepsTmuxCodesAndCallsTheRestSpawnFailed(t *testing.T) {
	unsafe := fmt.Errorf("session name: %w", tmux.ErrUnsafeArgument)
	if f := SpawnFailure(unsafe); f.Code != "unsafe_tmux_argument" || !errors.Is(f, tmux.ErrUnsafeArgument) || f.Error() != unsafe.Error() {
		t.Errorf("unsafe argument: %+v", f)
	}
	if f := SpawnFailure(fmt.Errorf("%w %q", ErrUnknownAgent, "x")); f.Code != "spawn_failed" || !errors.Is(f, ErrUnknownAgent) {
		t.Errorf("unknown agent: %+v", f)
	}
}

// kill-all, like list, says when it moved a corrupt state file aside on the
// way, and still kills the session.
func TestKillAllWarnsOfACorruptStateItMovedAside(t *testing.T) {
	tc := tmuxtest.Client(t)
	root := t.TempDir()
	dir := filepath.Join(root, "sessions")
	name := ProjectPrefix(root) + "broken"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sessionstate.StatePath(dir, name), []byte(`{"name": "cut off`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := tc.NewSession(ctx, tmux.NewSessionSpec{Name: name, Argv: []string{"sleep", "60"}}); err != nil {
		t.Fatal(err)
	}
	killed, warnings, err := Sessions{Tmux: tc, Root: root, Dir: dir}.KillAll(ctx, true)
	if err != nil || len(killed) != 1 || killed[0] != name || len(warnings) != 1 || !strings.Contains(warnings[0], "moved it aside") {
		t.Fatalf("killed %v, warnings %v, err %v", killed, warnings, err)
	}
	if alive, _ := tc.HasSession(ctx, name); alive {
		t.Fatal("the session is still there")
	}
}
