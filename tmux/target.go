package tmux

import (
	"fmt"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// Compiled on first use: the Stop hook, in the same binary, never needs them.
var (
	nameRE   = lazyre.New(`^[A-Za-z0-9_-]{1,200}$`)
	paneIDRE = lazyre.New(`^%[0-9]+$`)
)

// ValidName reports whether name is a session name this package will use:
// only [A-Za-z0-9_-], so it can never be read as a target pattern or separator.
func ValidName(name string) bool { return nameRE().MatchString(name) }

// ValidPaneID reports whether id looks like a tmux pane id (%N).
func ValidPaneID(id string) bool { return paneIDRE().MatchString(id) }

// SessionTarget is the exact-match target of a session: "=name".
func SessionTarget(name string) (string, error) {
	if !ValidName(name) {
		return "", fmt.Errorf("%w: invalid session name %q", ErrUnsafeArgument, name)
	}
	return "=" + name, nil
}

// PaneTarget is the exact-match target of a session's active pane: "=name:".
func PaneTarget(name string) (string, error) {
	t, err := SessionTarget(name)
	if err != nil {
		return "", err
	}
	return t + ":", nil
}
