// Package confine runs a command under bubblewrap (Linux) or sandbox-exec
// (macOS) with a policy: the folders it may write, the paths hidden from it,
// whether it has a network, and its private temporary folder.
package confine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/story-automator/story-automator/internal/coded"
)

// CodeSandboxUnavailable: the sandbox program is missing or cannot start
// here, so the command would run unconfined; it is refused instead.
const CodeSandboxUnavailable = "sandbox_unavailable"

// Install is how a Debian or Ubuntu machine gets bubblewrap.
const Install = "apt-get install bubblewrap"

// Policy is what a confined command may touch.
type Policy struct {
	Writable []string // folders the command may write (everything else read-only)
	ReadDeny []string // paths hidden from it: a folder appears empty, a file empty
	Network  bool     // false: no network at all (own network namespace)
	TmpDir   string   // private folder mounted as /tmp (and TMPDIR)
	// Nests: the command runs a bubblewrap of its own (an agent CLI's
	// sandbox, in a user namespace of its own), which must mount a fresh
	// /proc; the kernel allows that only where a /proc with nothing
	// mounted over it is in view. So the command keeps this machine's
	// /proc and process ids (no pid namespace of its own); what it runs
	// inside its own sandbox sees that sandbox's /proc only. It also keeps
	// root's capabilities (its sandbox needs them to start), so a
	// command that could run code of another's outside its own sandbox
	// must not be given Nests: it is for an agent CLI whose tools all run
	// in that sandbox.
	Nests bool
	// ReadOnly are paths inside a Writable folder kept read-only (a
	// repository's hooks and config in a writable .git); absent ones are
	// left out.
	ReadOnly []string
	// Over are folders mounted writable over others (Linux): a private
	// copy over a folder the command must write but whose changes must
	// not outlive it. Both must exist. Seatbelt cannot: on macOS they are
	// left out.
	Over []Mount `json:",omitempty"`
	// Net, when set, narrows the network to its hosts through a proxy
	// outside the sandbox (Network must be false, TmpDir set, Nests off).
	Net *Net `json:",omitempty"`

	// binds are files mounted read-only inside (source, target), and
	// proxyPorts the loopback ports the command may dial (macOS): set by
	// NetCommand when it starts the sandbox.
	binds      [][2]string
	proxyPorts []int
}

// Mount is a folder Src mounted at Dst.
type Mount struct{ Src, Dst string }

// Wrap returns argv run inside the policy (the bwrap/sandbox-exec argv +
// argv), or a coded error (sandbox_unavailable with the install line) when
// the sandbox program is missing or cannot start here. Every path in the
// policy must be absolute; a Writable folder or the TmpDir must exist
// (a ReadDeny path that does not exist has nothing to hide and is left out).
func Wrap(p Policy, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("confine: no command to run")
	}
	r, err := resolve(p)
	if err != nil {
		return nil, err
	}
	switch runtime.GOOS {
	case "linux":
		prog, err := available("bwrap", bwrapProbe)
		if err != nil {
			return nil, err
		}
		if p.Net != nil {
			return netArgv(p, argv)
		}
		return append([]string{prog}, bwrapArgs(r, argv)...), nil
	case "darwin":
		prog, err := available("sandbox-exec", seatbeltProbe)
		if err != nil {
			return nil, err
		}
		if p.Net != nil {
			return netArgv(p, argv)
		}
		return append([]string{prog}, seatbeltArgs(r, argv)...), nil
	default:
		return nil, coded.Fail(CodeSandboxUnavailable, "no sandbox for commands on %s", runtime.GOOS).
			WithAction("run with --sandbox off (commands unconfined), or on Linux or macOS")
	}
}

// Check proves that the sandbox program starts here (a trivial command
// under a policy like a real one), once per program path.
func Check() error {
	_, err := Wrap(Policy{}, []string{"true"})
	return err
}

// resolve checks the policy's paths and resolves symlinks, so the sandbox
// mounts (or names, in a Seatbelt profile) the real folders.
func resolve(p Policy) (Policy, error) {
	var out Policy
	out.Network, out.Nests, out.Net = p.Network, p.Nests, p.Net
	for _, w := range p.Writable {
		r, err := realPath(w)
		if err != nil {
			return Policy{}, fmt.Errorf("confine: writable folder: %w", err)
		}
		out.Writable = append(out.Writable, r)
	}
	for _, m := range p.Over {
		src, err := realPath(m.Src)
		if err != nil {
			return Policy{}, fmt.Errorf("confine: private copy: %w", err)
		}
		dst, err := realPath(m.Dst)
		if err != nil {
			return Policy{}, fmt.Errorf("confine: folder under a private copy: %w", err)
		}
		out.Over = append(out.Over, Mount{Src: src, Dst: dst})
	}
	if p.TmpDir != "" {
		r, err := realPath(p.TmpDir)
		if err != nil {
			return Policy{}, fmt.Errorf("confine: temp folder: %w", err)
		}
		out.TmpDir = r
	}
	var err error
	if out.ReadDeny, err = present(p.ReadDeny, "path to hide"); err != nil {
		return Policy{}, err
	}
	if out.ReadOnly, err = present(p.ReadOnly, "read-only path"); err != nil {
		return Policy{}, err
	}
	return out, nil
}

// present resolves the paths that exist (an absent one has nothing to
// hide or keep); each must be absolute.
func present(paths []string, what string) ([]string, error) {
	var out []string
	for _, d := range paths {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("confine: %s %q is not absolute", what, d)
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

func realPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not absolute", p)
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", p)
	}
	return r, nil
}

// probeBound bounds one probe (bwrap starts in milliseconds; the margin
// covers a loaded machine).
const probeBound = 20 * time.Second

var probed sync.Map // program path → error (nil: it works)

// available finds prog on the PATH and proves once that it starts here.
func available(prog string, probe func(path string) []string) (string, error) {
	path, err := exec.LookPath(prog)
	if err != nil {
		return "", unavailable(prog, "is not on the PATH")
	}
	if v, ok := probed.Load(path); ok {
		if v != nil {
			return "", v.(error)
		}
		return path, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeBound)
	defer cancel()
	argv := probe(path)
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		e := unavailable(prog, fmt.Sprintf("cannot start here (`%s`: %v: %s)", strings.Join(argv, " "), err,
			strings.Join(strings.Fields(string(out)), " ")))
		probed.Store(path, e)
		return "", e
	}
	probed.Store(path, nil)
	return path, nil
}

func unavailable(prog, why string) error {
	action := "install it: " + Install
	if runtime.GOOS == "darwin" {
		action = "sandbox-exec ships with macOS; check that it runs"
	}
	return coded.Fail(CodeSandboxUnavailable, "the sandbox for the run's own commands does not work here: %s %s", prog, why).
		WithAction("%s (or pass --sandbox off to run them unconfined)", action)
}

// bwrapProbe runs true in the namespaces a real policy uses.
func bwrapProbe(path string) []string {
	return append([]string{path}, bwrapArgs(Policy{}, []string{"true"})...)
}

// seatbeltProbe runs true under a profile like a real one.
func seatbeltProbe(path string) []string {
	return append([]string{path}, seatbeltArgs(Policy{}, []string{"true"})...)
}
