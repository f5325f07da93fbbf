package child

import "golang.org/x/term"

// makeRaw puts the terminal on fd into raw mode, so every key reaches the
// agent's own pty untouched; restore undoes it.
func makeRaw(fd int) (restore func(), err error) {
	old, err := term.MakeRaw(fd)
	if err != nil {
		return func() {}, err
	}
	return func() { _ = term.Restore(fd, old) }, nil
}

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool { return term.IsTerminal(fd) }
