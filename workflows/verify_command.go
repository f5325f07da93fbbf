package workflows

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/shellcmd"
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
		return Result{Detail: "no command configured", ContractErr: fmt.Errorf("%w: the command verifier has no command", ErrContract)}
	}
	var out bytes.Buffer
	r := shellcmd.Run(ctx, shellcmd.Command{Script: c.command, Dir: c.dir, Stdout: &out, Stderr: &out, Timeout: c.limit, WaitDelay: 2 * time.Second})
	switch {
	case r.Err == nil:
		return Result{Verified: true, Detail: fmt.Sprintf("%q exited 0 in %s", c.command, r.Took.Round(time.Millisecond))}
	case errors.Is(r.CtxErr, context.DeadlineExceeded):
		return Result{Detail: fmt.Sprintf("%q did not finish within %s%s", c.command, c.limit, tail(out.Bytes()))}
	case r.CtxErr != nil:
		return Result{Detail: fmt.Sprintf("%q was cancelled: %v", c.command, r.CtxErr)}
	}
	var exit *exec.ExitError
	if errors.As(r.Err, &exit) {
		return Result{Detail: fmt.Sprintf("%q failed (%s)%s", c.command, exit.ProcessState, tail(out.Bytes()))}
	}
	return Result{Detail: fmt.Sprintf("%q could not run: %v", c.command, r.Err)}
}

// tail returns the end of a command's output, for a verdict's detail.
func tail(out []byte) string {
	t := shellcmd.Tail(out, commandOutputTail)
	if t == "" {
		return ""
	}
	return ": " + t
}
