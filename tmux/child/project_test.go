package child

import (
	"errors"
	"fmt"
	"testing"

	"github.com/story-automator/story-automator/tmux"
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
