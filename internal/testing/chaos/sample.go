// Package chaos kills and resumes `story-automator run --agent sim` the way
// a terminal, a crash or a hostile project would, and checks after every
// round that nothing was lost and nothing left behind (`make chaos`).
package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/story-automator/story-automator/workflows/sample"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// Sample is a git-initialised copy of the sample BMAD project driven by
// the built binary on a private tmux server.
type Sample struct {
	Bin    string
	Root   string
	Home   string
	Socket string
	// Env is added to every command (faults for the simulated agent).
	Env []string
	// RunFlags are the round's flags of a fresh `run` on top of runFlags
	// (--parallel 2 in the parallel rounds).
	RunFlags []string
	// Units are the unit keys each to be committed once by the run (nil:
	// the sample's stories).
	Units []string
}

// NewSample writes the sample into dir/project and commits it.
func NewSample(bin, dir, socket string) (*Sample, error) {
	p := &Sample{Bin: bin, Root: filepath.Join(dir, "project"), Home: filepath.Join(dir, "home"), Socket: socket}
	if err := os.MkdirAll(p.Home, 0o700); err != nil {
		return nil, err
	}
	if err := sample.WriteSample(p.Root); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "sample"}} {
		if _, err := p.Git(args...); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// environ is the binary's environment: nothing of the caller's tmux, agent
// session or project, a private HOME (no git identity: the tool brings its own).
func (p *Sample) environ() []string {
	drop := []string{"TMUX", "TMUX_PANE", "PROJECT_ROOT", "HOME", "XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"}
	drop = append(append(drop, agent.SessionVars()...), agent.ProjectDirVars()...)
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "STORY_AUTOMATOR_") || strings.HasPrefix(k, "GIT_AUTHOR_") || strings.HasPrefix(k, "GIT_COMMITTER_") {
			continue
		}
		keep := true
		for _, d := range drop {
			keep = keep && k != d
		}
		if keep {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+p.Home, "PROJECT_ROOT="+p.Root, "STORY_AUTOMATOR_TMUX_SOCKET="+p.Socket,
		"GIT_CONFIG_NOSYSTEM=1")
	return append(env, p.Env...)
}

// Git runs git in the project (as the user, with an identity of its own).
func (p *Sample) Git(args ...string) (string, error) {
	c := exec.Command("git", append([]string{"-C", p.Root}, args...)...)
	c.Env = append(p.environ(), "GIT_AUTHOR_NAME=chaos", "GIT_AUTHOR_EMAIL=chaos@localhost",
		"GIT_COMMITTER_NAME=chaos", "GIT_COMMITTER_EMAIL=chaos@localhost")
	out, err := c.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("git %v: %w: %s", args, err, out)
	}
	return string(out), nil
}

// Command is the binary with args, in its own process group (as a shell
// starts a job), its stdout's lines readable from Lines.
type Command struct {
	Cmd   *exec.Cmd
	Lines chan string
	// Last is the last line read once Lines is closed.
	Last string
	err  strings.Builder
	done chan struct{}
}

// Start starts the binary with args.
func (p *Sample) Start(args ...string) (*Command, error) {
	c := exec.Command(p.Bin, args...)
	c.Dir, c.Env = p.Root, p.environ()
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd := &Command{Cmd: c, Lines: make(chan string, 256), done: make(chan struct{})}
	c.Stderr = &cmd.err
	if err := c.Start(); err != nil {
		return nil, err
	}
	go cmd.read(out)
	return cmd, nil
}

func (c *Command) read(r io.Reader) {
	defer close(c.done)
	defer close(c.Lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		c.Last = sc.Text()
		c.Lines <- c.Last
	}
}

// Wait drains the output and waits for the process, up to d; a process
// still running then is killed with its group and reported.
func (c *Command) Wait(d time.Duration) (exit int, err error) {
	timer := time.AfterFunc(d, func() { _ = syscall.Kill(-c.Cmd.Process.Pid, syscall.SIGKILL) })
	for range c.Lines {
	}
	<-c.done
	werr := c.Cmd.Wait()
	if !timer.Stop() {
		return -1, fmt.Errorf("%v did not end within %s", c.Cmd.Args[1:], d)
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, werr
}

// Result is the last JSON line of a command's output.
func (c *Command) Result() map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(c.Last), &m)
	return m
}

// Stderr is what the command wrote on stderr.
func (c *Command) Stderr() string { return c.err.String() }

// Run runs the binary to its end (bounded by d) and returns its last JSON
// line and exit code.
func (p *Sample) Run(d time.Duration, args ...string) (map[string]any, int, error) {
	c, err := p.Start(args...)
	if err != nil {
		return nil, 0, err
	}
	code, err := c.Wait(d)
	return c.Result(), code, err
}

// Shutdown kills the project's tmux server and removes its socket.
func (p *Sample) Shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if pid, ok := p.TmuxServerPid(); ok {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	_ = exec.CommandContext(ctx, "tmux", "-L", p.Socket, "kill-server").Run()
	_ = os.Remove(filepath.Join(tmuxDir(), p.Socket))
}

// TmuxServerPid returns the pid of the project's tmux server.
func (p *Sample) TmuxServerPid() (int, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	// list-sessions needs no client; the server exits with its last session.
	out, err := exec.CommandContext(ctx, "tmux", "-L", p.Socket, "list-sessions", "-F", "#{pid}").Output()
	if err != nil {
		return 0, false
	}
	var pid int
	_, err = fmt.Sscan(string(out), &pid)
	return pid, err == nil && pid > 0
}

// tmuxDir is where tmux keeps its sockets.
func tmuxDir() string {
	base := os.Getenv("TMUX_TMPDIR")
	if base == "" {
		base = "/tmp"
	}
	return filepath.Join(base, fmt.Sprintf("tmux-%d", os.Getuid()))
}
