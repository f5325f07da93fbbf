// Package tmuxtest gives tests a private tmux server: a unique -L socket,
// TMUX unset, and the server killed when the test ends.
package tmuxtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/story-automator/story-automator/tmux"
)

var seq atomic.Int64

// Require skips the test when tmux is not on PATH (CI installs it).
func Require(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
}

// Socket returns a fresh socket name whose server is killed in t.Cleanup.
// It unsets TMUX for the whole test process so nothing reaches the user's server.
func Socket(t testing.TB) string {
	t.Helper()
	Require(t)
	os.Unsetenv("TMUX")
	os.Unsetenv("TMUX_PANE")
	name := fmt.Sprintf("sa-test-%d-%d", os.Getpid(), seq.Add(1))
	t.Cleanup(func() { _ = tmux.New(name).KillServer(context.Background()) })
	return name
}

// Client returns a client on a fresh private server.
func Client(t testing.TB) *tmux.Client {
	t.Helper()
	return tmux.New(Socket(t))
}
