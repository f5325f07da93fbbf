package tmux

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// NewSessionSpec describes a detached session whose only pane runs Argv
// directly (no shell). Argv must not carry user text: a runner reads that from a file.
type NewSessionSpec struct {
	Name          string
	Width, Height int
	Argv          []string
}

// NewSession creates a detached session and returns its pane id.
func (c *Client) NewSession(ctx context.Context, s NewSessionSpec) (string, error) {
	if !ValidName(s.Name) {
		return "", fmt.Errorf("%w: invalid session name %q", ErrUnsafeArgument, s.Name)
	}
	if len(s.Argv) == 0 {
		return "", errors.New("new session: empty command")
	}
	args := []string{"new-session", "-d", "-s", s.Name, "-P", "-F", "#{pane_id}"}
	if s.Width > 0 && s.Height > 0 {
		args = append(args, "-x", strconv.Itoa(s.Width), "-y", strconv.Itoa(s.Height))
	}
	args = append(args, "--")
	args = append(args, s.Argv...)
	out, err := c.run(ctx, Command{Args: args})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// HasSession reports whether the session exists; no server means it does not.
func (c *Client) HasSession(ctx context.Context, name string) (bool, error) {
	t, err := SessionTarget(name)
	if err != nil {
		return false, err
	}
	_, err = c.run(ctx, Command{Args: []string{"has-session", "-t", t}})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoSession), errors.Is(err, ErrNoServer):
		return false, nil
	}
	return false, err
}

// Pane is one pane as list-panes reports it.
type Pane struct {
	Session  string `json:"session"`
	PaneID   string `json:"paneId"`
	PanePid  int    `json:"panePid"`
	Dead     bool   `json:"dead"`
	Created  int64  `json:"created"`
	Attached int    `json:"attached"`
}

const paneFormat = "#{session_name}\t#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{session_created}\t#{session_attached}"

// ListPanes lists every pane on the server; no server is an empty list.
func (c *Client) ListPanes(ctx context.Context) ([]Pane, error) {
	out, err := c.run(ctx, Command{Args: []string{"list-panes", "-a", "-F", paneFormat}})
	// A server that is exiting as its last session ends answers "no current
	// target": there is nothing to list, as with no server at all.
	if errors.Is(err, ErrNoServer) || errors.Is(err, ErrNoSession) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parsePanes(out), nil
}

func parsePanes(out string) []Pane {
	var panes []Pane
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 6 {
			continue
		}
		pid, _ := strconv.Atoi(f[2])
		created, _ := strconv.ParseInt(f[4], 10, 64)
		attached, _ := strconv.Atoi(f[5])
		panes = append(panes, Pane{Session: f[0], PaneID: f[1], PanePid: pid, Dead: f[3] == "1", Created: created, Attached: attached})
	}
	return panes
}

// KillSession kills one session by exact name.
func (c *Client) KillSession(ctx context.Context, name string) error {
	t, err := SessionTarget(name)
	if err != nil {
		return err
	}
	_, err = c.run(ctx, Command{Args: []string{"kill-session", "-t", t}})
	return err
}

// KillServer stops the whole server (tests and cleanup only). A private
// server's socket file (-L name) is removed too: tmux leaves it behind.
func (c *Client) KillServer(ctx context.Context) error {
	_, err := c.run(ctx, Command{Args: []string{"kill-server"}})
	if errors.Is(err, ErrNoServer) {
		err = nil
	}
	if err == nil && c.Socket != "" {
		_ = os.Remove(SocketPath(c.Socket))
	}
	return err
}

// SocketPath is where tmux puts the socket of `-L name`:
// $TMUX_TMPDIR (else /tmp)/tmux-<uid>/name.
func SocketPath(name string) string {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), name)
}

// CapturePane returns the text of a session's pane: the visible screen when
// lines is 0, else the last lines lines including scrollback.
func (c *Client) CapturePane(ctx context.Context, name string, lines int) (string, error) {
	t, err := PaneTarget(name)
	if err != nil {
		return "", err
	}
	args := []string{"capture-pane", "-p", "-J", "-t", t}
	if lines > 0 {
		args = append(args, "-S", "-"+strconv.Itoa(lines))
	}
	out, err := c.run(ctx, Command{Args: args})
	if err != nil {
		return "", err
	}
	if lines > 0 {
		out = lastLines(out, lines)
	}
	return out, nil
}

// lastLines keeps the last n lines of s, ignoring trailing blank lines.
func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for len(ls) > 0 && strings.TrimSpace(ls[len(ls)-1]) == "" {
		ls = ls[:len(ls)-1]
	}
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// Paste puts text into a session's pane through a named paste buffer: the
// text travels on tmux's stdin (load-buffer -), never as an argument.
func (c *Client) Paste(ctx context.Context, name, buffer, text string) error {
	t, err := PaneTarget(name)
	if err != nil {
		return err
	}
	if !ValidName(buffer) {
		return fmt.Errorf("%w: invalid buffer name %q", ErrUnsafeArgument, buffer)
	}
	if _, err := c.run(ctx, Command{Args: []string{"load-buffer", "-b", buffer, "-"}, Stdin: bytes.NewReader([]byte(text))}); err != nil {
		return err
	}
	_, err = c.run(ctx, Command{Args: []string{"paste-buffer", "-d", "-p", "-b", buffer, "-t", t}})
	return err
}

// Key names SendKey accepts: fixed tmux key names, never user text.
var keyNames = map[string]bool{"Enter": true, "BSpace": true, "Escape": true, "C-c": true, "C-d": true, "Up": true, "Down": true}

// SendKey presses one named key in a session's pane.
func (c *Client) SendKey(ctx context.Context, name, key string) error {
	if !keyNames[key] {
		return fmt.Errorf("%w: key %q is not allowed", ErrUnsafeArgument, key)
	}
	t, err := PaneTarget(name)
	if err != nil {
		return err
	}
	_, err = c.run(ctx, Command{Args: []string{"send-keys", "-t", t, key}})
	return err
}

// Attach connects the user's terminal to a session until they detach.
// TMUX is removed from tmux's environment so attaching from inside tmux works.
func (c *Client) Attach(ctx context.Context, name string, term *Terminal) error {
	t, err := SessionTarget(name)
	if err != nil {
		return err
	}
	_, err = c.run(ctx, Command{Args: []string{"attach-session", "-t", t}, Terminal: term, UnsetEnv: []string{"TMUX", "TMUX_PANE"}})
	return err
}
