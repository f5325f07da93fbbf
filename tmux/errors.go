package tmux

import (
	"errors"
	"fmt"
	"strings"
)

// Kinds of tmux failure, matched with errors.Is.
var (
	ErrNotInstalled     = errors.New("tmux is not installed")
	ErrTooOld           = errors.New("tmux is too old")
	ErrNoServer         = errors.New("no tmux server running")
	ErrNoSession        = errors.New("no such tmux session")
	ErrDuplicateSession = errors.New("tmux session already exists")
	ErrNoTerminal       = errors.New("not a terminal")
	ErrUnsafeArgument   = errors.New("argument unsafe for tmux")
	// ErrUnresponsive: tmux did not answer within its deadline (a hung or stopped server).
	ErrUnresponsive = errors.New("tmux did not answer in time")
)

// Error is a failed tmux call: the tmux subcommand (never the full argv,
// which may carry user text), tmux's own message, and the kind it was
// classified as.
type Error struct {
	Subcommand string
	Stderr     string
	Kind       error
	Err        error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("tmux %s: %s", e.Subcommand, msg)
}

// Is makes errors.Is(err, ErrNoSession) and friends work.
func (e *Error) Is(target error) bool { return e.Kind != nil && e.Kind == target }

func (e *Error) Unwrap() error { return e.Err }

// classify names the kind of failure from tmux's stderr alone.
func classify(stderr string) error {
	s := strings.ToLower(stderr)
	switch {
	case strings.Contains(s, "no server running"),
		strings.Contains(s, "error connecting to"),
		strings.Contains(s, "failed to connect to server"),
		strings.Contains(s, "server exited unexpectedly"):
		return ErrNoServer
	case strings.Contains(s, "can't find session"),
		strings.Contains(s, "session not found"),
		// A server left with no sessions at all (it is about to exit) has no
		// current target to resolve any -t against: the session is gone.
		strings.Contains(s, "no current target"),
		// attach-session on a server with no session (or none yet: attach
		// starts one) says only this.
		strings.TrimSpace(s) == "no sessions",
		strings.Contains(s, "can't find pane"),
		strings.Contains(s, "can't find window"):
		return ErrNoSession
	case strings.Contains(s, "duplicate session"):
		return ErrDuplicateSession
	case strings.Contains(s, "not a terminal"):
		return ErrNoTerminal
	}
	return nil
}

// Code is the stable snake_case code users see for a tmux error.
func Code(err error) string {
	switch {
	case errors.Is(err, ErrNotInstalled):
		return "tmux_not_installed"
	case errors.Is(err, ErrTooOld):
		return "tmux_too_old"
	case errors.Is(err, ErrNoServer):
		return "tmux_no_server"
	case errors.Is(err, ErrNoSession):
		return "session_not_found"
	case errors.Is(err, ErrDuplicateSession):
		return "session_exists"
	case errors.Is(err, ErrNoTerminal):
		return "not_a_terminal"
	case errors.Is(err, ErrUnsafeArgument):
		return "unsafe_tmux_argument"
	case errors.Is(err, ErrUnresponsive):
		return "tmux_unresponsive"
	}
	return "tmux_failed"
}
