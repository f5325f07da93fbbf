package tmux

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Command is one tmux invocation: the arguments after the program name
// (including any -L), and what to connect to it.
type Command struct {
	Args []string
	// Stdin feeds tmux's standard input (load-buffer -); nil means empty.
	Stdin io.Reader
	// Terminal, when set, connects tmux to these streams instead of
	// capturing its output (attach-session).
	Terminal *Terminal
	// UnsetEnv names variables removed from tmux's environment (TMUX for a nested attach).
	UnsetEnv []string
}

// Terminal is the user's terminal, for interactive commands.
type Terminal struct {
	In       io.Reader
	Out, Err io.Writer
}

// Executor runs tmux; tests inject a fake that records argv and scripts answers.
type Executor interface {
	// Run executes cmd and returns its stdout and stderr. A non-zero exit is
	// an error; an absent tmux binary is exec.ErrNotFound.
	Run(ctx context.Context, cmd Command) (stdout, stderr []byte, err error)
}

// waitDelay bounds the wait for tmux's output pipes once its process is done or killed.
const waitDelay = 2 * time.Second

// SystemExecutor runs the real tmux binary found on PATH (or Path when set).
type SystemExecutor struct {
	Path string
}

// Run executes tmux with exec.CommandContext, so the caller's deadline kills it.
func (x SystemExecutor) Run(ctx context.Context, c Command) ([]byte, []byte, error) {
	prog := x.Path
	if prog == "" {
		prog = "tmux"
	}
	cmd := exec.CommandContext(ctx, prog, c.Args...)
	// A tmux client that starts a server hands it our pipes: past the
	// deadline, stop waiting for them rather than for that server.
	cmd.WaitDelay = waitDelay
	if len(c.UnsetEnv) > 0 {
		cmd.Env = withoutVars(os.Environ(), c.UnsetEnv)
	}
	var stdout, stderr bytes.Buffer
	if c.Terminal != nil {
		// The user sees tmux's errors; a copy is kept to classify them.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Terminal.In, c.Terminal.Out, io.MultiWriter(c.Terminal.Err, &stderr)
	} else {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, &stdout, &stderr
	}
	err := cmd.Run()
	if err != nil && errors.Is(err, exec.ErrNotFound) {
		return nil, nil, exec.ErrNotFound
	}
	return stdout.Bytes(), stderr.Bytes(), err
}

func withoutVars(env, names []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
