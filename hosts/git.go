package hosts

import (
	"context"
	"fmt"
	"strings"

	"github.com/story-automator/story-automator/internal/shellword"
)

// GitSSH is the GIT_SSH_COMMAND that makes a local git push or fetch reach
// the host over its one connection (connected first when needed): git
// runs the host's ssh with the same options and control socket, and adds
// the destination and its git-receive-pack or git-upload-pack. Each git
// call that uses it is one round trip; GitRoundTrip counts it.
func (h *Host) GitSSH(ctx context.Context) (string, error) {
	if err := h.Connect(ctx); err != nil {
		return "", err
	}
	args := append(h.baseArgs("auto"), "-T")
	words := make([]string, len(args))
	for i, a := range args {
		q, err := shellword.Quote(a)
		if err != nil {
			return "", fmt.Errorf("host %s: %w", h.Name, err)
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// GitURL is the address git uses for a repository at path on the host.
func (h *Host) GitURL(path string) string { return h.Destination + ":" + path }

// GitRoundTrip counts a git push or fetch made over GitSSH. For one that
// failed it reports whether the connection was lost under it (forgotten
// then: the next call reconnects).
func (h *Host) GitRoundTrip(ctx context.Context, failed bool) (lost bool) {
	h.commands.Add(1)
	if failed && !h.masterAlive(ctx) {
		h.markDown()
		return true
	}
	return false
}
