package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// CodexLister tells which hooks a Codex CLI sees for a folder, with the hash
// it would trust and whether it trusts it now.
type CodexLister interface {
	ListHooks(ctx context.Context, cwd string) ([]CodexHook, error)
}

// ErrProgramNotFound is returned when the CLI to ask is not on PATH.
var ErrProgramNotFound = errors.New("not on PATH")

// CodexAppServer asks the installed Codex CLI itself: `codex app-server`
// speaks JSON-RPC over stdio, and its hooks/list answers with each hook's
// trust key and current hash — the hash its own review would store. The hash
// is never computed here, so a Codex release that changes it cannot make us
// write a trust Codex ignores.
type CodexAppServer struct {
	// Program is the CLI's executable: a path, or a name looked up on PATH
	// (its profile's Program).
	Program string
	// Env is the environment codex runs with (nil: ours).
	Env []string
	// Timeout bounds the whole exchange (default 30 s).
	Timeout time.Duration
}

// rpcMessage is one JSON-RPC line of the app-server.
type rpcMessage struct {
	ID     *int            `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params any             `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// ListHooks lists the hooks Codex sees for cwd.
func (s CodexAppServer) ListHooks(ctx context.Context, cwd string) ([]CodexHook, error) {
	prog := s.Program
	if !strings.ContainsRune(prog, '/') {
		p, err := exec.LookPath(prog)
		if err != nil {
			return nil, fmt.Errorf("%s is %w", prog, ErrProgramNotFound)
		}
		prog = p
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "app-server")
	cmd.Env, cmd.Dir = s.Env, cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The server may start helpers: end its whole group, never leave one behind.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start codex app-server: %w", err)
	}
	defer func() {
		stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	type answer struct {
		hooks []CodexHook
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		hooks, err := codexHooksExchange(stdin, stdout, cwd)
		done <- answer{hooks, err}
	}()
	select {
	case a := <-done:
		return a.hooks, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("codex app-server did not answer within %s", timeout)
	}
}

// codexHooksExchange runs initialize, initialized and hooks/list.
func codexHooksExchange(w io.Writer, r io.Reader, cwd string) ([]CodexHook, error) {
	enc := json.NewEncoder(w)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	call := func(id int, method string, params any) (json.RawMessage, error) {
		if err := enc.Encode(rpcMessage{ID: &id, Method: method, Params: params}); err != nil {
			return nil, fmt.Errorf("codex app-server %s: %w", method, err)
		}
		for sc.Scan() {
			var m rpcMessage
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID != id || m.Method != "" {
				continue // a notification, or a line that is not ours
			}
			if m.Error != nil {
				return nil, fmt.Errorf("codex app-server %s: %s", method, m.Error.Message)
			}
			return m.Result, nil
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("codex app-server %s: %w", method, err)
		}
		return nil, fmt.Errorf("codex app-server %s: it exited without an answer", method)
	}
	info := map[string]any{"clientInfo": map[string]string{"name": "story-automator", "version": "1"}}
	if _, err := call(1, "initialize", info); err != nil {
		return nil, err
	}
	if err := enc.Encode(rpcMessage{Method: "initialized"}); err != nil {
		return nil, err
	}
	raw, err := call(2, "hooks/list", map[string]any{"cwds": []string{cwd}})
	if err != nil {
		return nil, err
	}
	var res struct {
		Data []struct {
			Hooks  []CodexHook `json:"hooks"`
			Errors []any       `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("codex app-server hooks/list: %w", err)
	}
	var hooks []CodexHook
	for _, d := range res.Data {
		hooks = append(hooks, d.Hooks...)
	}
	return hooks, nil
}
