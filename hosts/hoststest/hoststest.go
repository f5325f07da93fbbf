// Package hoststest is a fake hosts.Executor: it records every ssh call and
// answers each with what the test scripted, so tests assert exact argv
// without a network.
package hoststest

import (
	"context"
	"io"
	"slices"
	"sync"

	"github.com/story-automator/story-automator/hosts"
)

// Reply is what one faked ssh call prints and how it exits.
type Reply struct {
	Stdout, Stderr string
	Exit           int
	Err            error
}

// Executor answers every call with Answer (nil: exit 0, no output) and keeps the calls.
type Executor struct {
	Answer func(argv []string, stdin []byte) Reply

	mu    sync.Mutex
	calls [][]string
}

// Exec records c and writes the scripted reply.
func (e *Executor) Exec(_ context.Context, c hosts.Cmd) (int, error) {
	var in []byte
	if c.Stdin != nil {
		in, _ = io.ReadAll(c.Stdin)
	}
	e.mu.Lock()
	e.calls = append(e.calls, slices.Clone(c.Argv))
	e.mu.Unlock()
	r := Reply{}
	if e.Answer != nil {
		r = e.Answer(c.Argv, in)
	}
	if c.Stdout != nil {
		_, _ = io.WriteString(c.Stdout, r.Stdout)
	}
	if c.Stderr != nil {
		_, _ = io.WriteString(c.Stderr, r.Stderr)
	}
	return r.Exit, r.Err
}

// Calls are the argv of every call so far.
func (e *Executor) Calls() [][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// Op is what an ssh argv does: "check" or "exit" (-O), "master" (-N), or
// the remote command line.
func Op(argv []string) string {
	if i := slices.Index(argv, "-O"); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	if slices.Contains(argv, "-N") {
		return "master"
	}
	return argv[len(argv)-1]
}
