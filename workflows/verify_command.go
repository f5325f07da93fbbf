package workflows

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// commandOutputTail bounds how much of a failing command's output goes into
// the verdict's detail.
const commandOutputTail = 1500

// commandCheck runs a configured shell command in the project root; it passes
// when the command exits 0 within limit. The whole process group is killed at
// the limit, so a test runner's children do not outlive it.
type commandCheck struct {
	dir, command string
	limit        time.Duration
}

func (c *commandCheck) Name() string { return VerifyCommand + ":" + c.command }

func (c *commandCheck) Verify(ctx context.Context) Result {
	if strings.TrimSpace(c.command) == "" {
		return Result{Detail: "no command configured", Err: fmt.Errorf("%w: the command verifier has no command", ErrContract)}
	}
	if c.limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.limit)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", c.command)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	started := time.Now()
	err := cmd.Run()
	took := time.Since(started).Round(time.Millisecond)
	switch {
	case err == nil:
		return Result{Verified: true, Detail: fmt.Sprintf("%q exited 0 in %s", c.command, took)}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Result{Detail: fmt.Sprintf("%q did not finish within %s%s", c.command, c.limit, tail(out.Bytes()))}
	case ctx.Err() != nil:
		return Result{Detail: fmt.Sprintf("%q was cancelled: %v", c.command, ctx.Err())}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return Result{Detail: fmt.Sprintf("%q failed (%s)%s", c.command, exit.ProcessState, tail(out.Bytes()))}
	}
	return Result{Detail: fmt.Sprintf("%q could not run: %v", c.command, err)}
}

// tail returns the end of a command's output, for a verdict's detail.
func tail(out []byte) string {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return ""
	}
	if len(out) > commandOutputTail {
		out = append([]byte("…"), out[len(out)-commandOutputTail:]...)
	}
	return ": " + string(out)
}
