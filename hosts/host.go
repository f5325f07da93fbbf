// Package hosts runs commands on the machines of a workflow's `hosts:` with
// the system's OpenSSH client, over one multiplexed connection per host.
package hosts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/internal/filelock"
	"github.com/story-automator/story-automator/internal/lazyre"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/workflows"
)

// EnvSSHCommand names the ssh program and options every host uses unless
// its own sshCommand says otherwise; unset, it is "ssh".
const EnvSSHCommand = "STORY_AUTOMATOR_SSH_COMMAND"

// Options are how a Host reaches its machine.
type Options struct {
	// ControlDir holds the connection's control socket; see ControlDir.
	ControlDir string
	// Getenv reads EnvSSHCommand (nil: os.Getenv).
	Getenv func(string) string
	// Exec runs ssh (nil: SystemExecutor).
	Exec Executor
	// Persist is how long an idle connection stays open (0: 10 minutes).
	Persist time.Duration
}

// Host is one remote machine: every command goes through the one ssh
// connection it keeps open (ControlMaster), and a dropped connection is
// made again on the next call. Safe for concurrent use.
type Host struct {
	Name        string
	Destination string
	// Dir is the host's work directory (absolute, on the host).
	Dir string

	sshArgv []string
	control string
	persist time.Duration
	exec    Executor

	mu       sync.Mutex
	up       bool
	connects atomic.Int64
	commands atomic.Int64
}

// Stats count what a Host did over the network: connections it opened
// (or tried to) and commands it ran over them (each one round trip).
type Stats struct {
	Connects int64 `json:"connects"`
	Commands int64 `json:"commands"`
}

// RoundTrips is every exchange with the host: connections plus commands.
func (s Stats) RoundTrips() int64 { return s.Connects + s.Commands }

// Stats returns the counts so far.
func (h *Host) Stats() Stats {
	return Stats{Connects: h.connects.Load(), Commands: h.commands.Load()}
}

// New returns the Host for a policy's ssh host; it connects on first use.
func New(spec workflows.Host, o Options) (*Host, error) {
	if spec.Local() || spec.SSH == "" {
		return nil, fmt.Errorf("host %q: not reached over ssh", spec.Name)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	argv, err := SSHCommand(spec.SSHCommand, getenv)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", spec.Name, err)
	}
	if o.ControlDir == "" {
		return nil, fmt.Errorf("host %s: no directory for the ssh control socket", spec.Name)
	}
	h := &Host{Name: spec.Name, Destination: spec.SSH, Dir: spec.Dir, sshArgv: argv, exec: o.Exec, persist: o.Persist}
	if h.exec == nil {
		h.exec = SystemExecutor{}
	}
	if h.persist <= 0 {
		h.persist = 10 * time.Minute
	}
	h.control = filepath.Join(o.ControlDir, socketName(spec.Name, spec.SSH, argv))
	return h, nil
}

// SSHCommand is the ssh program and options for a host: its own
// sshCommand, else EnvSSHCommand, else ssh; split into words as a shell would.
func SSHCommand(own string, getenv func(string) string) ([]string, error) {
	src, line := "sshCommand", own
	if strings.TrimSpace(line) == "" {
		src, line = EnvSSHCommand, getenv(EnvSSHCommand)
	}
	if strings.TrimSpace(line) == "" {
		return []string{"ssh"}, nil
	}
	words, err := shellword.Split(line)
	if err != nil || len(words) == 0 {
		return nil, fmt.Errorf("%s %q: must be a command of plain words such as ssh -F FILE", src, line)
	}
	return words, nil
}

// socketName is short and tells hosts (and their ssh settings) apart.
func socketName(name, dest string, argv []string) string {
	sum := sha256.Sum256([]byte(dest + "\x00" + strings.Join(argv, "\x00")))
	return name[:min(len(name), 12)] + "-" + hex.EncodeToString(sum[:4])
}

// socketLimit keeps a control socket's path within the shortest unix
// socket path (104 bytes on macOS) with room for the 17 characters ssh
// appends while it creates the socket and a host's socket name.
const socketLimit = 104 - 1 - 17 - 22

// ControlDir is where a project's control sockets live: stateDir/ssh when
// that path is short enough for a unix socket, else a private directory
// under the system's temporary directory named after stateDir.
func ControlDir(stateDir string) string {
	dir := filepath.Join(stateDir, "ssh")
	if len(dir) <= socketLimit {
		return dir
	}
	sum := sha256.Sum256([]byte(stateDir))
	return filepath.Join(os.TempDir(), "sa-"+strconv.Itoa(os.Getuid())+"-"+hex.EncodeToString(sum[:5]))
}

// ControlPath is the host's control socket.
func (h *Host) ControlPath() string { return h.control }

// baseArgs are the options every ssh call of this host carries: never a
// password prompt, the host's control socket, a bound on connecting and
// keep-alives so a dead connection is noticed. Host-key checking stays the
// user's setting.
func (h *Host) baseArgs(master string) []string {
	args := append([]string{}, h.sshArgv...)
	return append(args,
		"-o", "BatchMode=yes",
		"-o", "ControlMaster="+master,
		"-o", "ControlPersist="+strconv.Itoa(int(h.persist.Seconds())),
		"-o", "ConnectTimeout=30", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4",
		"-S", strings.ReplaceAll(h.control, "%", "%%"))
}

// SSHSettings are the settings ssh uses for the host, as `ssh -G` prints
// them for the host's ssh command with this tool's BatchMode: keyword (in
// lower case) to value. It runs here and does not connect.
func (h *Host) SSHSettings(ctx context.Context) (map[string]string, error) {
	var out, stderr bytes.Buffer
	argv := append(append([]string{}, h.sshArgv...), "-o", "BatchMode=yes", "-G", "--", h.Destination)
	code, err := h.exec.Exec(ctx, Cmd{Argv: argv, Stdout: &out, Stderr: &stderr})
	if err != nil {
		return nil, fmt.Errorf("host %s: run %s -G: %w", h.Name, h.sshArgv[0], err)
	}
	if code != 0 {
		return nil, fmt.Errorf("host %s: %s -G exited %d: %s", h.Name, h.sshArgv[0], code, strings.TrimSpace(stderr.String()))
	}
	settings := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			settings[strings.ToLower(k)] = strings.TrimSpace(v)
		}
	}
	return settings, nil
}

// Connect opens the host's connection unless it is open.
func (h *Host) Connect(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.up {
		return nil
	}
	if err := privateDir(filepath.Dir(h.control)); err != nil {
		return fmt.Errorf("host %s: control socket directory: %w", h.Name, err)
	}
	// Another process of the project may be opening the same connection:
	// one at a time checks for a master and starts one.
	unlock, err := filelock.Acquire(ctx, h.control+".lock", time.Minute)
	if err != nil {
		return fmt.Errorf("host %s: lock the connection: %w", h.Name, err)
	}
	defer unlock()
	if _, err := h.mux(ctx, "check"); err == nil {
		h.up = true
		return nil
	}
	// No master answers: a socket left by one that was killed is stale, and
	// ssh would not bind over it.
	if err := os.Remove(h.control); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("host %s: remove stale control socket: %w", h.Name, err)
	}
	var stderr bytes.Buffer
	argv := append(h.baseArgs("yes"), "-N", "-f", "-T", "--", h.Destination)
	code, err := h.exec.Exec(ctx, Cmd{Argv: argv, Stdout: io.Discard, Stderr: &stderr})
	if err != nil {
		return fmt.Errorf("host %s: run %s: %w", h.Name, h.sshArgv[0], err)
	}
	h.connects.Add(1)
	if code != 0 {
		if ce := h.classify(255, stderr.String()); ce != nil {
			return ce
		}
		return h.fail(CodeUnreachable, ErrUnreachable, "cannot connect to %s (%s): ssh exited %d: %s", h.Name, h.Destination, code, lastLines(stderr.String(), 3))
	}
	h.up = true
	return nil
}

// mux sends the connection's master a control command (check, exit) and
// returns what ssh said; it talks to the local socket only.
func (h *Host) mux(ctx context.Context, op string) (string, error) {
	var stderr bytes.Buffer
	argv := append(h.baseArgs("no"), "-O", op, "--", h.Destination)
	code, err := h.exec.Exec(ctx, Cmd{Argv: argv, Stdout: io.Discard, Stderr: &stderr})
	if err == nil && code != 0 {
		err = fmt.Errorf("ssh -O %s: exit %d: %s", op, code, lastLines(stderr.String(), 2))
	}
	return stderr.String(), err
}

// masterAlive reports whether the connection's master still answers.
func (h *Host) masterAlive(ctx context.Context) bool {
	_, err := h.mux(ctx, "check")
	return err == nil
}

var masterPID = lazyre.New(`pid=(\d+)`)

// Close ends the host's connection and returns once its master process is
// gone (or ctx ends); a later call connects again.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.up = false
	if _, err := os.Stat(h.control); err != nil {
		return nil
	}
	said, err := h.mux(ctx, "check")
	if err != nil {
		return nil
	}
	if _, err := h.mux(ctx, "exit"); err != nil {
		return err
	}
	if m := masterPID().FindStringSubmatch(said); m != nil {
		pid, _ := strconv.Atoi(m[1])
		waitGone(ctx, pid)
	}
	return nil
}

// waitGone returns when pid has exited, or ctx ends.
func waitGone(ctx context.Context, pid int) {
	w := wake.New()
	defer w.Close()
	if w.Process(pid) != nil {
		return
	}
	for proc.Alive(pid) {
		select {
		case <-w.C:
		case <-ctx.Done():
			return
		}
	}
}

// markDown forgets the connection after ssh lost it.
func (h *Host) markDown() {
	h.mu.Lock()
	h.up = false
	h.mu.Unlock()
}

// Request is one command for the host.
type Request struct {
	// Args is the command and its arguments; each is quoted for the host's shell.
	Args []string
	// Stdin feeds the command (nil: nothing).
	Stdin io.Reader
	// Stdout receives the output as it comes (nil: Result.Stdout).
	Stdout io.Writer
	// Retry marks a command safe to run twice: when the connection drops
	// under it, the Host reconnects and runs it once more.
	Retry bool
}

// Result is what a command printed and how it exited.
type Result struct {
	Stdout, Stderr []byte
	Exit           int
}

// Run runs a command on the host over its connection, connecting first
// when needed. A non-zero exit is an *ExitError (the Result still holds
// the output); an ssh failure is a coded error whose cause is ErrUnreachable,
// ErrHostKey or ErrAuth.
func (h *Host) Run(ctx context.Context, req Request) (Result, error) {
	res, err := h.runOnce(ctx, req)
	if err != nil && req.Retry && errors.Is(err, ErrUnreachable) && ctx.Err() == nil {
		return h.runOnce(ctx, req)
	}
	return res, err
}

// TerminalArgv is the ssh command line that runs args on the host with a
// terminal of its own (ssh -t), over the host's connection (opened first
// when needed): for a program the user's terminal is handed to, such as
// tmux attach. The caller runs it with the terminal as its standard streams.
func (h *Host) TerminalArgv(ctx context.Context, args []string) ([]string, error) {
	if err := h.Connect(ctx); err != nil {
		return nil, err
	}
	line, err := commandLine(args)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	return append(h.baseArgs("auto"), "-t", "--", h.Destination, line), nil
}

func (h *Host) runOnce(ctx context.Context, req Request) (Result, error) {
	if err := h.Connect(ctx); err != nil {
		return Result{}, err
	}
	line, err := commandLine(req.Args)
	if err != nil {
		return Result{}, fmt.Errorf("host %s: %w", h.Name, err)
	}
	var stdout, stderr bytes.Buffer
	out := io.Writer(&stdout)
	if req.Stdout != nil {
		out = req.Stdout
	}
	stdin := req.Stdin
	argv := append(h.baseArgs("auto"), "-T", "--", h.Destination, line)
	if stdin == nil {
		argv = append(h.baseArgs("auto"), "-n", "-T", "--", h.Destination, line)
	}
	h.commands.Add(1)
	code, err := h.exec.Exec(ctx, Cmd{Argv: argv, Stdin: stdin, Stdout: out, Stderr: &stderr})
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Exit: code}
	if err != nil {
		return res, fmt.Errorf("host %s: run %s: %w", h.Name, h.sshArgv[0], err)
	}
	ce := h.classify(code, stderr.String())
	if ce == nil && code == 255 && strings.TrimSpace(stderr.String()) == "" && !h.masterAlive(ctx) {
		// A command riding a connection that dies under it exits 255 and
		// says nothing: the master it talked to is gone.
		ce = h.fail(CodeUnreachable, ErrUnreachable, "lost the connection to %s (%s)", h.Name, h.Destination)
	}
	if ce != nil {
		if errors.Is(ce, ErrUnreachable) {
			h.markDown()
		}
		return res, ce
	}
	if code != 0 {
		return res, &ExitError{Host: h.Name, Args: req.Args, Code: code, Stderr: stderr.String()}
	}
	return res, nil
}

// commandLine is args as one line for the host's shell, each word quoted.
func commandLine(args []string) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("no command")
	}
	words := make([]string, len(args))
	for i, a := range args {
		q, err := shellword.Quote(a)
		if err != nil {
			return "", err
		}
		words[i] = q
	}
	return strings.Join(words, " "), nil
}

// privateDir makes dir (mode 0700) and checks that it is a directory of
// this user's that no one else may enter: whoever can put a socket there
// could pose as the host's connection.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("%s belongs to another user", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s is open to other users (mode %o): make it 0700", dir, fi.Mode().Perm())
	}
	return nil
}
