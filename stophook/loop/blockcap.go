package loop

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/story-automator/story-automator/agent"
)

// BlockCapWarning tells, at loop start, when the agent CLI's own cap on
// consecutive Stop-hook blocks will end the loop before maxIterations, and
// how to raise it. A loop's first iteration is the user's prompt and each
// further one is a block, so a capped session runs at most cap+1 iterations.
// The cap is read from this process's environment, which is the agent
// session's own when the loop is started from inside it.
func BlockCapWarning(maxIterations int, getenv func(string) string) string {
	bc, ok := agent.SessionBlockCap(getenv)
	if !ok {
		return "" // the session's agent has no such cap
	}
	limit := bc.Default
	if v, err := strconv.Atoi(strings.TrimSpace(getenv(bc.Env))); err == nil {
		limit = v
	}
	if limit <= 0 || maxIterations <= limit+1 {
		return ""
	}
	return fmt.Sprintf("in %s this loop ends after %d iterations, not %d: %s ends a turn after %d consecutive Stop-hook blocks; "+
		"start %s with %s=%d (or more) to run all %d", bc.Product, limit+1, maxIterations, bc.Product, limit, bc.Product, bc.Env, maxIterations-1, maxIterations)
}
