package tmuxsteps

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/story-automator/story-automator/hosts"
)

// lostChild is a child left on a host the run declared lost: nothing more
// is taken from it, and it is ended as soon as the host answers again.
type lostChild struct{ run, pdir, name string }

// reapEvery is how often a lost host is tried again for its children
// (Remote.ReapEvery, when set, says otherwise).
const reapEvery = 15 * time.Second

// reapTimeout bounds one try at ending a lost child (ssh's own connect
// timeout is 30 s).
const reapTimeout = 40 * time.Second

// abandon records a child the run stopped waiting for because its host
// was lost, and tries to end it in the background until the host answers.
func (r *Remote) abandon(run, pdir, name string) {
	r.mu.Lock()
	r.lost = append(r.lost, lostChild{run: run, pdir: pdir, name: name})
	start := !r.reaping
	r.reaping = true
	r.mu.Unlock()
	if start {
		go r.reap()
	}
}

// reap tries the host again every ReapEvery until its lost children are ended.
func (r *Remote) reap() {
	every := r.ReapEvery
	if every <= 0 {
		every = reapEvery
	}
	for r.endLost(context.Background(), reapTimeout) > 0 {
		time.Sleep(every)
	}
}

// endLost tries once to end each lost child; it returns how many are left
// (their host still unreachable). A host that answers, even that the
// session is gone, has ended it; any other failure is not tried again.
func (r *Remote) endLost(ctx context.Context, timeout time.Duration) int {
	// One try at a time (the reaper's, the run's last): each keeps the
	// children added while it tried.
	r.reapMu.Lock()
	defer r.reapMu.Unlock()
	r.mu.Lock()
	tried := slices.Clone(r.lost)
	r.mu.Unlock()
	var left []lostChild
	for _, c := range tried {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		_, err := r.Host.Script(cctx, r.command(c.run, c.pdir, "session", "kill", c.name), nil)
		cancel()
		if errors.Is(err, hosts.ErrUnreachable) {
			left = append(left, c)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost = append(left, r.lost[len(tried):]...)
	if len(r.lost) == 0 {
		r.reaping = false
	}
	return len(r.lost)
}

// EndLost is the run's last try at ending the children left on this host
// since it was lost, bounded by ctx; it returns the names still running there.
func (r *Remote) EndLost(ctx context.Context) []string {
	if r.endLost(ctx, reapTimeout) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.lost))
	for _, c := range r.lost {
		names = append(names, c.name)
	}
	return names
}

// EndLostChildren is EndLost on every host of the run, at its end: the
// names of the children still running on hosts that do not answer, by host.
func (t *Runner) EndLostChildren(ctx context.Context) map[string][]string {
	var out map[string][]string
	for name, r := range t.Remotes {
		if left := r.EndLost(ctx); len(left) > 0 {
			if out == nil {
				out = map[string][]string{}
			}
			out[name] = left
		}
	}
	return out
}
