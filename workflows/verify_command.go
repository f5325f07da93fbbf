package workflows

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/internal/gitdirs"
	"github.com/story-automator/story-automator/internal/shellcmd"
)

// commandOutputTail bounds how much of a failing command's output goes into
// the verdict's detail.
const commandOutputTail = 1500

// CommandSandbox is how the command verifier confines the project's
// command, which runs what a child wrote (its tests): with the child's
// policy, the folder and its git directories writable (never the files
// there that make git run code), a private /tmp, the user's credentials
// hidden.
type CommandSandbox struct {
	// Off runs the command as the user (--sandbox off, `sandbox: off`).
	Off bool
	// Network are the hosts it may reach (sandbox.network), through this
	// tool's proxy (confine.Net); none: no network at all.
	Network []string
	// Exe is this program, which runs the proxy ("" = the running one).
	Exe string
	// ReadDeny are paths hidden from it besides the user's credentials
	// (sandbox.readDeny: absolute, or "~/…" under the user's home).
	ReadDeny []string
	// Env is a confined command's environment: the allow-list a child
	// starts from (nil = this process's), so a secret of the run's that no
	// child sees is not in reach of what a child wrote either.
	Env []string
}

// CommandSandbox is the command verifier's sandbox as the policy's
// `sandbox` sets it (a run overrides Off with its own setting).
func (p *Policy) CommandSandbox() CommandSandbox {
	return CommandSandbox{Off: p.Sandbox.Off, Network: p.Sandbox.Network, ReadDeny: p.Sandbox.ReadDeny}
}

// policy is the confinement of a command run in dir with tmp as its /tmp.
func (s CommandSandbox) policy(dir, tmp string) confine.Policy {
	home, _ := os.UserHomeDir()
	var deny []string
	if home != "" {
		deny = confine.CredentialPaths(home)
	}
	for _, d := range s.ReadDeny {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			if home == "" {
				continue
			}
			d = filepath.Join(home, rest)
		}
		deny = append(deny, d)
	}
	pol := confine.Policy{Writable: append([]string{dir}, gitdirs.Writable(dir)...), ReadOnly: gitdirs.Guarded(dir),
		ReadDeny: deny, TmpDir: tmp}
	if len(s.Network) > 0 {
		exe := s.Exe
		if exe == "" {
			exe, _ = os.Executable()
		}
		pol.Net = &confine.Net{Exe: exe, Allow: s.Network}
	}
	return pol
}

// commandCheck runs a configured shell command in the project root (or the
// story's worktree), confined by sb; it passes when the command exits 0
// within limit. The whole process group is killed at the limit, so a test
// runner's children do not outlive it.
type commandCheck struct {
	dir, command string
	limit        time.Duration
	sb           CommandSandbox
}

func (c *commandCheck) Name() string { return VerifyCommand + ":" + c.command }

func (c *commandCheck) Verify(ctx context.Context) Result {
	if strings.TrimSpace(c.command) == "" {
		return Result{Detail: "no command configured", ContractErr: fmt.Errorf("%w: the command verifier has no command", ErrContract)}
	}
	var out bytes.Buffer
	run := shellcmd.Command{Script: c.command, Dir: c.dir, Stdout: &out, Stderr: &out, Timeout: c.limit, WaitDelay: 2 * time.Second}
	if !c.sb.Off {
		tmp, err := os.MkdirTemp("", "story-automator-verify-")
		if err != nil {
			return Result{Detail: fmt.Sprintf("%q could not run: %v", c.command, err)}
		}
		defer os.RemoveAll(tmp)
		pol := c.sb.policy(c.dir, tmp)
		if c.sb.Env != nil {
			run.Env = c.sb.Env
		}
		run.Wrap = func(argv []string) ([]string, error) { return confine.Wrap(pol, argv) }
	}
	r := shellcmd.Run(ctx, run)
	switch {
	case r.Err == nil:
		return Result{Verified: true, Detail: fmt.Sprintf("%q exited 0 in %s", c.command, r.Took.Round(time.Millisecond))}
	case errors.Is(r.CtxErr, context.DeadlineExceeded):
		return Result{Detail: fmt.Sprintf("%q did not finish within %s%s", c.command, c.limit, tail(out.Bytes()))}
	case r.CtxErr != nil:
		return Result{Detail: fmt.Sprintf("%q was cancelled: %v", c.command, r.CtxErr)}
	}
	var exit *exec.ExitError
	if errors.As(r.Err, &exit) {
		return Result{Detail: fmt.Sprintf("%q failed (%s)%s", c.command, exit.ProcessState, tail(out.Bytes()))}
	}
	return Result{Detail: fmt.Sprintf("%q could not run: %v", c.command, r.Err)}
}

// tail returns the end of a command's output, for a verdict's detail.
func tail(out []byte) string {
	t := shellcmd.Tail(out, commandOutputTail)
	if t == "" {
		return ""
	}
	return ": " + t
}
