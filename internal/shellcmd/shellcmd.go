// Package shellcmd runs a user's shell command (`sh -c`) in its own process
// group, so that a deadline kills the command and everything it started.
package shellcmd

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// DefaultWaitDelay is how long Run waits for the command's output pipes to
// close after the command exits or is killed, when Command.WaitDelay is zero.
const DefaultWaitDelay = time.Second

// Command is one run of a user's shell command.
type Command struct {
	// Shell runs Script as `Shell -c Script`; "sh" (found on PATH) when empty.
	Shell  string
	Script string
	Dir    string
	// Env is the command's environment; nil means this process's.
	Env   []string
	Stdin io.Reader
	// Stdout and Stderr receive the output; nil discards it. The same writer
	// may be given for both.
	Stdout, Stderr io.Writer
	// Timeout bounds the run; zero leaves only ctx's own deadline.
	Timeout time.Duration
	// WaitDelay is how long to wait for the output pipes once the command
	// has exited or been killed (a stray child may hold them open);
	// DefaultWaitDelay when zero.
	WaitDelay time.Duration
	// Wrap, when set, turns the shell's argv into the argv that runs it (a
	// sandbox: internal/confine); its error is the run's.
	Wrap func(argv []string) ([]string, error)
}

// Result is how a run ended.
type Result struct {
	// Err is what running the command returned: nil for exit status 0, an
	// *exec.ExitError for a non-zero exit or a kill, or why it could not start.
	Err error
	// CtxErr is the run's context error as the run ended: DeadlineExceeded
	// when Timeout (or ctx's deadline) passed, Canceled when ctx was
	// cancelled, nil otherwise.
	CtxErr error
	// Took is how long the run lasted.
	Took time.Duration
}

// Run runs c and waits for it. When the timeout passes or ctx ends, the
// whole process group is killed with SIGKILL.
func Run(ctx context.Context, c Command) Result {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	shell := c.Shell
	if shell == "" {
		shell = "sh"
	}
	argv := []string{shell, "-c", c.Script}
	if c.Wrap != nil {
		var err error
		if argv, err = c.Wrap(argv); err != nil {
			return Result{Err: err, CtxErr: ctx.Err()}
		}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.Stdin = c.Stdin
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = c.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	started := time.Now()
	err := cmd.Run()
	return Result{Err: err, CtxErr: ctx.Err(), Took: time.Since(started)}
}

// Tail is the end of a command's output for a message: out without
// surrounding blanks, cut to its last n bytes behind "…" when longer.
func Tail(out []byte, n int) string {
	out = bytes.TrimSpace(out)
	if len(out) <= n {
		return string(out)
	}
	return "…" + string(out[len(out)-n:])
}

// CappedBuffer keeps at most Limit bytes of what is written to it and notes
// that more were written; writes never fail, so the command is not stopped
// by a full buffer. (It wraps rather than embeds a bytes.Buffer: an embedded
// one's ReadFrom would let io.Copy, and so os/exec, write past the cap.)
type CappedBuffer struct {
	Limit int
	buf   bytes.Buffer
	over  bool
}

func (c *CappedBuffer) Write(p []byte) (int, error) {
	if room := c.Limit - c.buf.Len(); room < len(p) {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

// Over reports whether more than Limit bytes were written.
func (c *CappedBuffer) Over() bool { return c.over }

// Bytes is what was kept.
func (c *CappedBuffer) Bytes() []byte { return c.buf.Bytes() }

// String is what was kept, as a string.
func (c *CappedBuffer) String() string { return c.buf.String() }
