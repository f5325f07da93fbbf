package hosts

import (
	"errors"
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/internal/coded"
)

// Causes of an ssh failure, under the coded.Error the Host returns
// (errors.Is finds them).
var (
	// ErrUnreachable is a connection that could not be made or was lost: a
	// later call reconnects.
	ErrUnreachable = errors.New("host unreachable")
	// ErrHostKey is a host key ssh does not know or that changed.
	ErrHostKey = errors.New("host key not trusted")
	// ErrAuth is a host that refused the user's keys.
	ErrAuth = errors.New("ssh authentication refused")
)

// Codes of the errors a Host returns.
const (
	CodeUnreachable    = "host_unreachable"
	CodeHostKeyUnknown = "host_key_unknown"
	CodeHostKeyChanged = "host_key_changed"
	CodeAuth           = "host_auth_failed"
	CodeCommand        = "host_command_failed"
)

// ExitError is a command that ran on the host and exited non-zero.
type ExitError struct {
	Host   string
	Args   []string
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("on host %s: %s exited %d: %s", e.Host, strings.Join(e.Args, " "), e.Code, lastLines(e.Stderr, 3))
}

// unreachableSigns are what ssh prints (exit 255) when it cannot reach a
// host or loses the connection, as opposed to a remote command exiting 255.
var unreachableSigns = []string{
	"Could not resolve hostname", "Connection refused", "Connection timed out", "timed out",
	"No route to host", "Network is unreachable", "Connection closed", "Connection reset",
	"closed by remote host", "Broken pipe", "kex_exchange_identification", "mux_client",
	"Control socket", "Timeout, server", "client_loop", "Connection to", "lost connection",
}

// classify turns a failed ssh call (exit 255) into the host's error, or nil
// when stderr shows the remote command itself exited 255.
func (h *Host) classify(exit int, stderr string) *coded.Error {
	if exit != 255 {
		return nil
	}
	detail := lastLines(stderr, 3)
	connect := strings.Join(h.sshArgv, " ") + " " + h.Destination
	switch {
	case strings.Contains(stderr, "REMOTE HOST IDENTIFICATION HAS CHANGED"):
		return h.fail(CodeHostKeyChanged, ErrHostKey, "the host key of %s (%s) changed since it was recorded: %s", h.Name, h.Destination, detail).
			WithAction("check with the host's owner that the key really changed, then remove the old key (ssh-keygen -R HOST) and connect once with `%s`", connect)
	case strings.Contains(stderr, "Host key verification failed") || strings.Contains(stderr, "host key is known"):
		return h.fail(CodeHostKeyUnknown, ErrHostKey, "ssh does not know the host key of %s (%s) and story-automator never accepts one blindly: %s", h.Name, h.Destination, detail).
			WithAction("connect once with `%s` and confirm the key, or add it with ssh-keyscan after checking its fingerprint", connect)
	case strings.Contains(stderr, "Permission denied"):
		return h.fail(CodeAuth, ErrAuth, "%s (%s) refused the login: %s", h.Name, h.Destination, detail).
			WithAction("make `%s true` work without a password prompt (a key in ssh-agent or IdentityFile)", connect)
	}
	for _, s := range unreachableSigns {
		if strings.Contains(stderr, s) {
			return h.fail(CodeUnreachable, ErrUnreachable, "cannot reach %s (%s): %s", h.Name, h.Destination, detail).
				WithAction("check that `%s true` works from this machine", connect)
		}
	}
	return nil
}

func (h *Host) fail(code string, cause error, format string, args ...any) *coded.Error {
	msg := fmt.Sprintf(format, args...)
	return &coded.Error{Code: code, Message: msg, Exit: coded.ExitFailed, Err: fmt.Errorf("%w: %s", cause, msg),
		Fields: map[string]any{"host": h.Name}}
}

// lastLines is the last n non-empty lines of s, joined with "; ".
func lastLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r", ""), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	if len(out) == 0 {
		return "no message"
	}
	return strings.Join(out, "; ")
}
