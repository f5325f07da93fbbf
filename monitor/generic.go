package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/verify"

	"github.com/story-automator/story-automator/internal/shellcmd"
)

// DefaultCommandBound is how long a cmd: verifier may run before it counts as failed.
const DefaultCommandBound = 60 * time.Second

// ErrContract marks a verifier that cannot work as written.
var ErrContract = errors.New("invalid verifier contract")

// ParseVerifySpec builds a generic verifier from --verify: "none",
// "cmd:<shell command>" (exit 0 within bound) or "glob:<pattern>[=N]"
// (relative to root; at least one match, or exactly N). Anything else is an
// ErrContract error.
func ParseVerifySpec(spec, root string, bound time.Duration) (Verifier, error) {
	if bound <= 0 {
		bound = DefaultCommandBound
	}
	kind, arg, hasArg := strings.Cut(spec, ":")
	switch {
	case spec == "" || spec == "none":
		return noneVerifier{}, nil
	case kind == "cmd" && hasArg:
		if strings.TrimSpace(arg) == "" {
			return nil, fmt.Errorf("%w: cmd: needs a command", ErrContract)
		}
		return &commandVerifier{command: arg, dir: root, bound: bound}, nil
	case kind == "glob" && hasArg:
		return parseGlob(arg, root)
	}
	return nil, fmt.Errorf("%w: unknown verifier %q (use none, cmd:<command> or glob:<pattern>[=N])", ErrContract, spec)
}

type noneVerifier struct{}

func (noneVerifier) Name() string { return "none" }
func (noneVerifier) Verify(context.Context) Verdict {
	return Verdict{Verified: true, Detail: "no verification asked"}
}

// ContractFailure is a verifier that reports err as a contract error. Watch
// consults it as soon as the session is known to exist (no completion is
// awaited), so the answer is incomplete after that one verification; a
// missing session is still not_found.
func ContractFailure(name string, err error) Verifier { return verify.Contract(name, err) }

type commandVerifier struct {
	command, dir string
	bound        time.Duration
}

func (v *commandVerifier) Name() string { return "cmd:" + v.command }

// Verify runs the user's command through sh -c (it is a shell command by
// contract), in its own process group so a timeout kills all of it.
func (v *commandVerifier) Verify(ctx context.Context) Verdict {
	var out bytes.Buffer
	r := shellcmd.Run(ctx, shellcmd.Command{Script: v.command, Dir: v.dir, Stdout: &out, Stderr: &out, Timeout: v.bound})
	switch {
	case r.Err == nil:
		return Verdict{Verified: true, Detail: "exit status 0"}
	case r.CtxErr != nil:
		return Verdict{Detail: fmt.Sprintf("no answer within %s", v.bound)}
	}
	var ee *exec.ExitError
	if errors.As(r.Err, &ee) {
		return Verdict{Detail: strings.TrimSpace(fmt.Sprintf("exit status %d %s", ee.ExitCode(), shellcmd.Tail(out.Bytes(), 300)))}
	}
	return Verdict{Detail: fmt.Sprintf("cannot run: %v", r.Err)}
}

type globVerifier struct {
	pattern, root string
	exact         int // -1 = at least one
}

func parseGlob(arg, root string) (Verifier, error) {
	pattern, exact := arg, -1
	if i := strings.LastIndexByte(arg, '='); i >= 0 {
		if n, err := strconv.Atoi(arg[i+1:]); err == nil {
			if n < 0 {
				return nil, fmt.Errorf("%w: glob count must not be negative", ErrContract)
			}
			pattern, exact = arg[:i], n
		}
	}
	if pattern == "" {
		return nil, fmt.Errorf("%w: glob: needs a pattern", ErrContract)
	}
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("%w: glob pattern %q: %v", ErrContract, pattern, err)
	}
	return &globVerifier{pattern: pattern, root: root, exact: exact}, nil
}

func (v *globVerifier) Name() string {
	if v.exact >= 0 {
		return "glob:" + v.pattern + "=" + strconv.Itoa(v.exact)
	}
	return "glob:" + v.pattern
}

func (v *globVerifier) Verify(context.Context) Verdict {
	p := v.pattern
	if !filepath.IsAbs(p) {
		p = filepath.Join(v.root, p)
	}
	matches, err := filepath.Glob(p)
	if err != nil {
		return Verdict{Detail: err.Error(), ContractErr: fmt.Errorf("%w: %v", ErrContract, err)}
	}
	n := len(matches)
	ok := n > 0
	want := "at least 1"
	if v.exact >= 0 {
		ok, want = n == v.exact, strconv.Itoa(v.exact)
	}
	return Verdict{Verified: ok, Detail: fmt.Sprintf("%d match(es), want %s", n, want)}
}
