package child

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/sessionstate"
)

// Default pane size when the runner's terminal cannot tell.
const (
	DefaultWidth  = 200
	DefaultHeight = 50
)

// exitNotStarted is recorded when the agent could not be started at all,
// as a shell does for a command it cannot run.
const exitNotStarted = 127

// Runner runs one session's agent inside its tmux pane: the agent gets its
// own pty, whose output is copied from the first byte to the pane and to the
// session's output file; the pane's keys and size are forwarded; pids and
// the exit status go into the session state file.
type Runner struct {
	StateDir, Name string
	// Pane is the pane's terminal (the runner's stdin): keys and window size.
	Pane *os.File
	// Screen is the pane's output (the runner's stdout).
	Screen io.Writer
	// Term is the pane's terminal type, given to the agent.
	Term string
	// Stop delivers hangup/terminate requests; Resize delivers SIGWINCH.
	Stop, Resize <-chan os.Signal
	Now          func() time.Time
	// KillGrace is how long a hung-up agent gets before SIGKILL.
	KillGrace time.Duration
}

// RunPane is the entry point of the hidden session-runner command.
func RunPane(stateDir, name string) int {
	stop := make(chan os.Signal, 4)
	signal.Notify(stop, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT)
	resize := make(chan os.Signal, 4)
	signal.Notify(resize, syscall.SIGWINCH)
	r := &Runner{StateDir: stateDir, Name: name, Pane: os.Stdin, Screen: os.Stdout,
		Term: os.Getenv("TERM"), Stop: stop, Resize: resize, Now: time.Now, KillGrace: 2 * time.Second}
	return r.Run()
}

// agentProc is a started agent process and the master side of its pty.
type agentProc struct {
	cmd  *exec.Cmd
	ptmx *os.File
}

// Run starts the agent, waits for it and records how it ended.
func (r *Runner) Run() int {
	spec, err := TakeSpec(r.StateDir, r.Name)
	if err != nil {
		r.say(nil, "story-automator: cannot start the session: %v", err)
		r.recordExit(exitNotStarted, "")
		return exitNotStarted
	}
	out, err := os.OpenFile(spec.OutputFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		r.say(nil, "story-automator: output file: %v", err)
		out = nil
	}
	var file io.Writer = io.Discard //nolint:staticcheck // QF1011: an *os.File may replace it below
	if out != nil {
		defer out.Close()
		file = out
	}
	ag, err := r.start(spec)
	if err != nil {
		r.say(file, "story-automator: cannot start %s: %v", spec.Argv[0], err)
		r.recordExit(exitNotStarted, "")
		return exitNotStarted
	}
	r.record(func(st *sessionstate.State) {
		st.Lifecycle = sessionstate.LifecycleStarted
		st.PanePid, st.AgentPid = os.Getpid(), ag.cmd.Process.Pid
		st.StartedAt = marker.Timestamp(r.Now())
	})
	teeDone := make(chan struct{})
	go tee(ag.ptmx, file, r.Screen, teeDone)
	if !spec.UseStdin && r.Pane != nil && isTerminal(int(r.Pane.Fd())) {
		if restore, err := makeRaw(int(r.Pane.Fd())); err == nil {
			defer restore()
		}
		go func() { _, _ = io.Copy(ag.ptmx, r.Pane) }()
	}
	state, killed := r.wait(ag)
	// The sandbox's per-child settings and private temp dir end with the agent.
	defer removeSandboxFiles(r.StateDir, r.Name)
	select {
	case <-teeDone:
	case <-time.After(250 * time.Millisecond):
		// A grandchild still holds the pty; its output is not worth a later exit record.
	}
	ag.ptmx.Close()
	if killed {
		r.record(func(st *sessionstate.State) {
			st.Lifecycle, st.ExitedAt = LifecycleKilled, marker.Timestamp(r.Now())
		})
		return 1
	}
	code, sig := exitFacts(state)
	r.recordExitFacts(code, sig)
	return 0
}

// start opens the agent's pty and starts it as the leader of a new session.
func (r *Runner) start(spec Spec) (*agentProc, error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open pty: %w", err)
	}
	size := &pty.Winsize{Cols: DefaultWidth, Rows: DefaultHeight}
	if r.Pane != nil {
		if ws, err := pty.GetsizeFull(r.Pane); err == nil && ws.Cols > 0 {
			size = ws
		}
	}
	_ = pty.Setsize(ptmx, size)
	env := spec.Env
	if r.Term != "" {
		env = WithVars(env, map[string]string{"TERM": r.Term})
	}
	path, err := lookPath(spec.Argv[0], envValue(env, "PATH"), spec.Dir)
	if err != nil {
		ptmx.Close()
		tty.Close()
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: spec.Argv, Env: env, Dir: spec.Dir, Stdout: tty, Stderr: tty}
	var stdin io.WriteCloser
	if spec.UseStdin {
		if stdin, err = cmd.StdinPipe(); err != nil {
			ptmx.Close()
			tty.Close()
			return nil, err
		}
	} else {
		cmd.Stdin = tty
	}
	// Ctty is the child's fd 1, which is the pty in both stdin modes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	err = cmd.Start()
	tty.Close()
	if err != nil {
		ptmx.Close()
		return nil, err
	}
	if stdin != nil {
		go func() {
			_, _ = io.WriteString(stdin, spec.Stdin)
			stdin.Close()
		}()
	}
	return &agentProc{cmd: cmd, ptmx: ptmx}, nil
}

// wait returns when the agent has exited; a stop request (the pane was
// killed) hangs the agent up, then kills it after KillGrace.
func (r *Runner) wait(ag *agentProc) (*os.ProcessState, bool) {
	waitc := make(chan *os.ProcessState, 1)
	go func() {
		_ = ag.cmd.Wait()
		waitc <- ag.cmd.ProcessState
	}()
	killed := false
	var force <-chan time.Time
	pgid := ag.cmd.Process.Pid
	for {
		select {
		case st := <-waitc:
			return st, killed
		case <-r.Resize:
			if r.Pane != nil {
				_ = pty.InheritSize(r.Pane, ag.ptmx)
			}
		case <-r.Stop:
			if !killed {
				killed = true
				_ = syscall.Kill(-pgid, syscall.SIGHUP)
				force = time.After(r.KillGrace)
			}
		case <-force:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
}

// tee copies the agent's output to the output file first (it must keep
// everything) and to the pane while the pane still exists.
func tee(src io.Reader, file, screen io.Writer, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 32*1024)
	screenOK := screen != nil
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_, _ = file.Write(buf[:n])
			if screenOK {
				if _, werr := screen.Write(buf[:n]); werr != nil {
					screenOK = false
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func exitFacts(ps *os.ProcessState) (*int, string) {
	if ps == nil {
		c := exitNotStarted
		return &c, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return nil, unix.SignalName(ws.Signal())
	}
	c := ps.ExitCode()
	return &c, ""
}

func (r *Runner) recordExit(code int, sig string) { r.recordExitFacts(&code, sig) }

func (r *Runner) recordExitFacts(code *int, sig string) {
	r.record(func(st *sessionstate.State) {
		st.Lifecycle, st.ExitedAt = sessionstate.LifecycleExited, marker.Timestamp(r.Now())
		st.ExitCode, st.Signal = code, sig
	})
}

func (r *Runner) record(fn func(st *sessionstate.State)) {
	_, err := sessionstate.Update(r.StateDir, r.Name, func(st *sessionstate.State) error {
		fn(st)
		return nil
	})
	if err != nil {
		r.say(nil, "story-automator: cannot record the session state: %v", err)
	}
}

// say prints a runner message on the pane (raw mode: explicit CR) and to the output file.
func (r *Runner) say(file io.Writer, format string, args ...any) {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "\r\n") + "\r\n"
	if r.Screen != nil {
		_, _ = io.WriteString(r.Screen, msg)
	}
	if file != nil {
		_, _ = io.WriteString(file, msg)
	}
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// lookPath finds prog the way execvp would, but in the child's PATH, not the runner's.
func lookPath(prog, path, dir string) (string, error) {
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) && dir != "" {
			prog = filepath.Join(dir, prog)
		}
		return prog, checkExecutable(prog)
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, prog)
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if checkExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH", prog)
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New(p + " is not executable")
	}
	return nil
}
