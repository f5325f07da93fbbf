package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/status"
)

// defaultWaitBound keeps one `status --wait` under Claude Code's Bash tool
// default timeout (2 minutes in 2.1.x, BASH_DEFAULT_TIMEOUT_MS; read from the
// pinned CLI): a waiting agent session calls again rather than being cut off.
const defaultWaitBound = 100 * time.Second

// statusWait blocks until the run needs nobody's waiting any more (or the
// bound passes) and prints what happened with the one next command.
func statusWait(c *cli.Context, e *runtimeEnv) error {
	if c.Duration("return-after") < 0 {
		return coded.Usage("--return-after must not be negative (0 = no bound), e.g. --return-after 9m")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := status.WaitRun(ctx, e.ProjectRoot, e.Getenv, c.Duration("return-after"))
	if err != nil && ctx.Err() == nil {
		return coded.Fail("status_wait", "%v", err)
	}
	text := func(w io.Writer) { fmt.Fprintf(w, "%s.\nNext: %s\n", res.Message, res.Next) }
	if err := cliio.Emit(e.Out, cliio.OK(status.WaitFields(res)), text); err != nil {
		return err
	}
	if code := status.WaitExit(res.Outcome); code != 0 {
		return cliio.ExitStatus(code)
	}
	return nil
}
