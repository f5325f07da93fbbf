package tmux_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// A stopped (hung) tmux server does not hang its callers: a call fails with
// tmux_unresponsive once its deadline passes.
func TestAHungServerFailsCallsWithUnresponsive(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Client(t)
	ctx := context.Background()
	if _, err := c.NewSession(ctx, tmux.NewSessionSpec{Name: "s", Width: 80, Height: 20, Argv: []string{"/bin/sh", "-c", "exec cat"}}); err != nil {
		t.Fatal(err)
	}
	out, _, err := tmux.SystemExecutor{}.Run(ctx, tmux.Command{Args: []string{"-L", c.Socket, "display-message", "-p", "#{pid}"}})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Errorf("resume the stopped tmux server %d: %v", pid, err)
		}
	}()
	c.Timeout = 500 * time.Millisecond
	_, err = c.HasSession(ctx, "s")
	if !errors.Is(err, tmux.ErrUnresponsive) || tmux.Code(err) != "tmux_unresponsive" {
		t.Fatalf("has-session on a stopped server: %v (code %s)", err, tmux.Code(err))
	}
}

// Killing a private server removes its socket file: tests leave none behind.
func TestKillServerRemovesThePrivateSocketFile(t *testing.T) {
	t.Parallel()
	c := tmuxtest.Client(t)
	ctx := context.Background()
	if _, err := c.NewSession(ctx, tmux.NewSessionSpec{Name: "s", Width: 80, Height: 20, Argv: []string{"/bin/sh", "-c", "exec cat"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmux.SocketPath(c.Socket)); err != nil {
		t.Fatalf("socket file of a running server: %v", err)
	}
	if err := c.KillServer(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmux.SocketPath(c.Socket)); !os.IsNotExist(err) {
		t.Fatalf("socket file left after kill-server: %v", err)
	}
}
