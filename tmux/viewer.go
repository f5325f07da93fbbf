package tmux

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
)

// SwitchClient moves the tmux client the caller runs in to session name
// (`switch-client`): from inside tmux, a session is reached without nesting
// one tmux in another. It works only when that client is on this client's
// server (Serves).
func (c *Client) SwitchClient(ctx context.Context, name string) error {
	t, err := SessionTarget(name)
	if err != nil {
		return err
	}
	_, err = c.run(ctx, Command{Args: []string{"switch-client", "-t", t}})
	return err
}

// Serves reports whether tmuxEnv, a $TMUX value ("socket path,pid,session"),
// names this client's server: the caller runs inside it.
func (c *Client) Serves(tmuxEnv string) bool {
	path, _, ok := strings.Cut(tmuxEnv, ",")
	if !ok || path == "" {
		return false
	}
	name := c.Socket
	if name == "" {
		name = "default"
	}
	return filepath.Clean(path) == SocketPath(name)
}

// CapturePaneColors returns a session's screen with its colours and
// attributes as escape sequences (capture-pane -e), for showing the pane as
// it looks: the last lines with the scrollback, or the visible screen (0).
func (c *Client) CapturePaneColors(ctx context.Context, name string, lines int) (string, error) {
	t, err := PaneTarget(name)
	if err != nil {
		return "", err
	}
	args := []string{"capture-pane", "-p", "-e", "-t", t}
	if lines > 0 {
		args = append(args, "-S", "-"+strconv.Itoa(lines))
	}
	return c.run(ctx, Command{Args: args})
}
