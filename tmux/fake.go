package tmux

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

// FakeCall is one call a FakeExecutor received.
type FakeCall struct {
	Args        []string
	Stdin       string
	Interactive bool
}

// FakeResult is what a FakeExecutor answers: output, an exit status, or a
// missing tmux binary.
type FakeResult struct {
	Stdout, Stderr string
	Exit           int
	NotInstalled   bool
}

// FakeExecutor records every call and answers from Handle (nil answers
// success with no output); it lets tests assert exact argv without a server.
type FakeExecutor struct {
	Handle func(FakeCall) FakeResult

	mu    sync.Mutex
	calls []FakeCall
}

// Run records the call and returns Handle's answer.
func (f *FakeExecutor) Run(ctx context.Context, c Command) ([]byte, []byte, error) {
	call := FakeCall{Args: append([]string(nil), c.Args...), Interactive: c.Terminal != nil}
	if c.Stdin != nil {
		b, err := io.ReadAll(c.Stdin)
		if err != nil {
			return nil, nil, err
		}
		call.Stdin = string(b)
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	var r FakeResult
	if f.Handle != nil {
		r = f.Handle(call)
	}
	if r.NotInstalled {
		return nil, nil, exec.ErrNotFound
	}
	if r.Exit != 0 {
		return []byte(r.Stdout), []byte(r.Stderr), fmt.Errorf("exit status %d", r.Exit)
	}
	return []byte(r.Stdout), []byte(r.Stderr), ctx.Err()
}

// Calls returns a copy of the calls received so far.
func (f *FakeExecutor) Calls() []FakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeCall(nil), f.calls...)
}
