package tmux

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// DefaultTimeout bounds every tmux call that does not say otherwise.
const DefaultTimeout = 5 * time.Second

// MinMajor and MinMinor are the oldest tmux supported (3.0: multi-argument
// commands are executed without a shell).
const (
	MinMajor = 3
	MinMinor = 0
)

// Client runs tmux commands on one server: the default one, or -L Socket.
type Client struct {
	Exec    Executor
	Socket  string
	Timeout time.Duration

	// versionOK: CheckVersion passed once; a run spawns a session per
	// step and need not ask tmux for its version each time.
	versionOK atomic.Bool
}

// New returns a client for the real tmux on the given socket ("" = default server).
func New(socket string) *Client {
	return &Client{Exec: SystemExecutor{}, Socket: socket, Timeout: DefaultTimeout}
}

// run is the single entry point to tmux: it applies -L, the deadline, the
// argument guard and the error classification.
func (c *Client) run(ctx context.Context, cmd Command) (string, error) {
	sub := ""
	if len(cmd.Args) > 0 {
		sub = cmd.Args[0]
	}
	for _, a := range cmd.Args {
		if err := SafeArg(a); err != nil {
			return "", &Error{Subcommand: sub, Kind: ErrUnsafeArgument, Err: err}
		}
	}
	if c.Socket != "" {
		if err := SafeArg(c.Socket); err != nil || strings.HasPrefix(c.Socket, "-") {
			return "", &Error{Subcommand: sub, Kind: ErrUnsafeArgument, Err: fmt.Errorf("socket name %q", c.Socket)}
		}
		cmd.Args = append([]string{"-L", c.Socket}, cmd.Args...)
	}
	if cmd.Terminal == nil {
		timeout := c.Timeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	stdout, stderr, err := c.Exec.Run(ctx, cmd)
	if err == nil {
		return string(stdout), nil
	}
	if errors.Is(err, exec.ErrNotFound) {
		return "", &Error{Subcommand: sub, Kind: ErrNotInstalled, Err: err}
	}
	if ctx.Err() != nil {
		var kind error
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			kind = ErrUnresponsive
		}
		return "", &Error{Subcommand: sub, Kind: kind, Err: fmt.Errorf("%w: %w", ctx.Err(), err)}
	}
	return "", &Error{Subcommand: sub, Stderr: string(stderr), Kind: classify(string(stderr)), Err: err}
}

// SafeArg refuses what tmux could parse as something other than one plain
// argument: a trailing ";" (a command separator) and NUL bytes.
func SafeArg(a string) error {
	if strings.HasSuffix(a, ";") {
		return fmt.Errorf("%w: argument ends with ';'", ErrUnsafeArgument)
	}
	if strings.ContainsRune(a, 0) {
		return fmt.Errorf("%w: argument contains a NUL byte", ErrUnsafeArgument)
	}
	return nil
}

// Version is a parsed `tmux -V`.
type Version struct {
	Major, Minor int
	Raw          string
}

var versionRE = lazyre.New(`(\d+)\.(\d+)`)

// ParseVersion reads `tmux -V` output; development builds without a number
// ("tmux master") count as new enough.
func ParseVersion(out string) (Version, error) {
	raw := strings.TrimSpace(out)
	if !strings.HasPrefix(raw, "tmux ") {
		return Version{}, fmt.Errorf("unrecognised tmux version %q", raw)
	}
	m := versionRE().FindStringSubmatch(raw)
	if m == nil {
		return Version{Major: 99, Raw: raw}, nil
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return Version{Major: major, Minor: minor, Raw: raw}, nil
}

// AtLeast reports whether v is major.minor or newer.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Version asks tmux for its version.
func (c *Client) Version(ctx context.Context) (Version, error) {
	out, err := c.run(ctx, Command{Args: []string{"-V"}})
	if err != nil {
		return Version{}, err
	}
	return ParseVersion(out)
}

// CheckVersion fails with ErrNotInstalled or ErrTooOld unless tmux ≥ 3.0 is
// available. Once it passed, the client does not ask again.
func (c *Client) CheckVersion(ctx context.Context) error {
	if c.versionOK.Load() {
		return nil
	}
	v, err := c.Version(ctx)
	if err != nil {
		return err
	}
	if !v.AtLeast(MinMajor, MinMinor) {
		return &Error{Subcommand: "-V", Kind: ErrTooOld,
			Err: fmt.Errorf("%s found, %d.%d or newer needed", v.Raw, MinMajor, MinMinor)}
	}
	c.versionOK.Store(true)
	return nil
}
