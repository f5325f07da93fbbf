package loop

import (
	"fmt"
	"strconv"
	"strings"
)

// Claude Code 2.1.x ends a turn after more than CLAUDE_CODE_STOP_HOOK_BLOCK_CAP
// (default 8) consecutive Stop-hook blocks, whatever the hook says (read from
// the pinned CLI). A loop's first iteration is the user's prompt and each
// further one is a block, so a Claude session runs at most cap+1 iterations.
const (
	claudeBlockCapVar     = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"
	claudeDefaultBlockCap = 8
)

// BlockCapWarning tells, at loop start, when Claude Code's own cap on
// consecutive Stop-hook blocks will end the loop before maxIterations, and
// how to raise it. The cap is read from this process's environment, which is
// the Claude session's own when the loop is started from inside it.
func BlockCapWarning(maxIterations int, getenv func(string) string) string {
	if getenv("CODEX_THREAD_ID") != "" && getenv("CLAUDE_CODE_SESSION_ID") == "" {
		return "" // a Codex session: Claude Code's cap does not apply
	}
	limit := claudeDefaultBlockCap
	if v, err := strconv.Atoi(strings.TrimSpace(getenv(claudeBlockCapVar))); err == nil {
		limit = v
	}
	if limit <= 0 || maxIterations <= limit+1 {
		return ""
	}
	return fmt.Sprintf("in Claude Code this loop ends after %d iterations, not %d: Claude Code ends a turn after %d consecutive Stop-hook blocks; "+
		"start Claude Code with %s=%d (or more) to run all %d", limit+1, maxIterations, limit, claudeBlockCapVar, maxIterations-1, maxIterations)
}
