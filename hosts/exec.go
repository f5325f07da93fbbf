package hosts

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"time"
)

// Cmd is one local program run: the ssh client with its arguments.
type Cmd struct {
	Argv   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Executor runs a local program and returns its exit status; err is set only
// when the program could not be run or was stopped by ctx. Tests inject a
// fake one (hosts/hoststest) and assert the exact argv.
type Executor interface {
	Exec(ctx context.Context, c Cmd) (exitCode int, err error)
}

// SystemExecutor runs programs with os/exec.
type SystemExecutor struct{}

// waitDelay bounds how long a finished ssh may keep its output open: a
// master that goes to the background must not hold the caller forever.
const waitDelay = 5 * time.Second

// Exec runs c.Argv; a non-zero exit is a status, not an error.
func (SystemExecutor) Exec(ctx context.Context, c Cmd) (int, error) {
	if len(c.Argv) == 0 {
		return -1, errors.New("run: no program")
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, c.Stdout, c.Stderr
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil && ee.Exited() {
		return ee.ExitCode(), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		return -1, err
	}
	return 0, nil
}
