// Package tmuxtest gives tests a private tmux server: a unique -L socket,
// TMUX unset, and the server killed when the test ends.
package tmuxtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/testtier"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
)

var seq atomic.Int64

// Require skips the test when tmux is not on PATH (fails it under
// CI=true, where CI installs it), and under -short: a test that starts
// tmux is an integration test.
func Require(t testing.TB) {
	t.Helper()
	testtier.Integration(t)
	if _, err := exec.LookPath("tmux"); err != nil {
		testtier.Missing(t, "tmux is not installed")
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

// Shutdown kills the server and waits (up to 5s) until every runner
// recorded in the session state files under stateDirs has exited, so no
// runner writes into a test's temp dir after it is removed. Register it with
// t.Cleanup after creating the temp dirs: cleanups run last-in first-out.
func Shutdown(socket string, stateDirs ...string) {
	_ = tmux.New(socket).KillServer(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for _, dir := range stateDirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			for time.Now().Before(deadline) && runnerMayWrite(dir, name) {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}

// runnerMayWrite reports whether the session's runner may still write into
// its state directory: it is alive, or it was spawned and has not yet
// recorded its pid (a runner starting as the server dies still records how it ended).
func runnerMayWrite(dir, name string) bool {
	st, err := sessionstate.Read(dir, name)
	switch {
	case errors.Is(err, marker.ErrNotFound):
		return false
	case err != nil:
		return true // being replaced right now: look again
	case st.PanePid > 0:
		return proc.Alive(st.PanePid)
	}
	return st.Lifecycle == "starting"
}
