package hosts

import (
	"context"
	"io"
	"strings"

	"github.com/story-automator/story-automator/internal/shellword"
)

// Quote is s as one word of a script the host's sh runs (shellword.Quote).
// Only a NUL cannot be quoted; a string holding one, which no path, name or
// flag sent to a host does, becomes the empty word.
func Quote(s string) string {
	q, err := shellword.Quote(s)
	if err != nil {
		return "''"
	}
	return q
}

// Line is args as one command line of a script, each word quoted.
func Line(args ...string) string {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = Quote(a)
	}
	return strings.Join(words, " ")
}

// shellArgs runs script under POSIX sh on the host, whatever the user's
// login shell: the one place a remote script is handed to a shell.
func shellArgs(script string) []string { return []string{"sh", "-c", script} }

// Script runs a POSIX sh script on the host, whatever the user's login
// shell, as Run does: a non-zero exit is an *ExitError and the Result still
// holds the output.
func (h *Host) Script(ctx context.Context, script string, stdin io.Reader) (Result, error) {
	return h.Run(ctx, Request{Args: shellArgs(script), Stdin: stdin})
}

// TerminalScript is the ssh command line that runs script under POSIX sh
// on the host with a terminal of its own, as TerminalArgv.
func (h *Host) TerminalScript(ctx context.Context, script string) ([]string, error) {
	return h.TerminalArgv(ctx, shellArgs(script))
}
