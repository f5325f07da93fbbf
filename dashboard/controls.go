package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/remotesession"
	"github.com/story-automator/story-automator/resolve"
	"github.com/story-automator/story-automator/tmux"
)

// Controls are the dashboard's actions. Each makes the call its command
// does: pause is `marker pause`, stop is the run's Ctrl-C, resume starts
// `run --resume` itself, attach is `session attach`, resolve is `resolve
// STORY` on the terminal, confirm and replan re-arm a story as `resolve
// --no-interactive` does (resolve.Resolver).
type Controls struct {
	Root   string
	Getenv func(string) string
	// Exe is story-automator itself, which resume and resolve start.
	Exe     string
	Environ []string

	// Tests replace the calls the resolve keys make; nil = the real ones.
	rearm       func(ctx context.Context, o resolve.Options) (*resolve.Result, error)
	resolveOn   func(story, socket string) tea.Cmd
	startResume func(stateFile, socket string) noteMsg
}

// Rearm re-arms a story with no session: resolve.Resolver.Resolve, as
// `resolve --no-interactive` (o.Replan: back to planning).
func (c Controls) Rearm(ctx context.Context, o resolve.Options) (*resolve.Result, error) {
	if c.rearm != nil {
		return c.rearm(ctx, o)
	}
	return resolve.Resolver{Root: c.Root, Getenv: c.Getenv}.Resolve(ctx, o)
}

// Resolve hands the terminal to `resolve STORY` (its session with the
// run's agent, then the re-arm); the dashboard comes back when it ends.
func (c Controls) Resolve(story, socket string) tea.Cmd {
	if c.resolveOn != nil {
		return c.resolveOn(story, socket)
	}
	args := []string{"--project-root", c.Root}
	if socket != "" {
		args = append(args, "--tmux-socket", socket)
	}
	cmd := exec.Command(c.Exe, append(args, "resolve", story)...)
	cmd.Dir, cmd.Env = c.Root, c.Environ
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		if err != nil {
			return noteMsg{err: fmt.Errorf("resolve %s: %w (the story is left as it was)", story, err)}
		}
		return noteMsg{text: "resolved " + story + ": r resumes the run"}
	})
}

// resume is Resume, or the test's.
func (c Controls) resume(stateFile, socket string) noteMsg {
	if c.startResume != nil {
		return c.startResume(stateFile, socket)
	}
	return c.Resume(stateFile, socket)
}

// noteMsg is an action's outcome, shown on the status line.
type noteMsg struct {
	text string
	err  error
}

// pauseReason is what status shows of a pause made from the dashboard.
const pauseReason = "paused from the dashboard"

// Pause pauses the run's marker: the run stops after its current steps.
func (c Controls) Pause(ctx context.Context) noteMsg {
	_, err := marker.NewStore(c.Root, c.Getenv).Pause(ctx, pauseReason)
	if errors.Is(err, marker.ErrNotFound) {
		return noteMsg{err: errors.New("no run to pause: the project has no marker")}
	}
	return noteMsg{text: "paused: the run stops after its current steps", err: err}
}

// Stop stops the running run as Ctrl-C in its terminal would.
func (c Controls) Stop() noteMsg {
	pid, err := orchestrator.StopRun(c.Root, c.Getenv)
	if err != nil {
		return noteMsg{err: err}
	}
	return noteMsg{text: fmt.Sprintf("stopping the run (pid %d): it pauses for %s", pid, orchestrator.ResumeCommand)}
}

// RunLog is where a run started from the dashboard writes its output:
// beside its state document.
func RunLog(stateFile string) string { return strings.TrimSuffix(stateFile, ".md") + ".log" }

// Resume starts `run --resume` on its own (a session of its own, so it
// outlives the dashboard), on the run's tmux socket, its output appended to
// the run's log.
func (c Controls) Resume(stateFile, socket string) noteMsg {
	logPath := RunLog(stateFile)
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return noteMsg{err: fmt.Errorf("open the run's log: %w", err)}
	}
	defer f.Close()
	args := []string{"--project-root", c.Root}
	if socket != "" {
		args = append(args, "--tmux-socket", socket)
	}
	cmd := exec.Command(c.Exe, append(args, "run", "--resume")...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.Root, c.Environ, f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return noteMsg{err: fmt.Errorf("start %s: %w", orchestrator.ResumeCommand, err)}
	}
	go func() { _ = cmd.Wait() }() // reaped if it ends while the dashboard runs
	return noteMsg{text: fmt.Sprintf("resumed (pid %d); its output goes to %s", cmd.Process.Pid, logPath)}
}

// Attach connects the terminal to a child session as `session attach` does,
// the dashboard leaving the screen until the user detaches; inside tmux on
// the run's own server it switches the client to the session instead.
func (c Controls) Attach(socket, session string) tea.Cmd {
	client := tmux.New(socket)
	if client.Serves(c.Getenv("TMUX")) {
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := client.SwitchClient(ctx, session); err != nil {
				return noteMsg{err: err}
			}
			return noteMsg{text: "switched to " + session}
		}
	}
	return tea.Exec(&attachCommand{client: client, name: session}, func(err error) tea.Msg {
		if err != nil {
			return noteMsg{err: fmt.Errorf("attach %s: %w", session, err)}
		}
		return noteMsg{text: "back from " + session}
	})
}

// AttachRemote connects the terminal to a child session on an ssh host as
// `session attach` does for one: the host's own `session attach`, with a
// terminal of its own, over the pool's connection to the host
// (remotesession.AttachArgv); the dashboard comes back when the user
// detaches there.
func (c Controls) AttachRemote(pool *remotesession.Pool, w remotesession.Where, session string) tea.Cmd {
	return func() tea.Msg {
		if pool == nil {
			return noteMsg{err: errNoHosts}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		argv, err := pool.AttachArgv(ctx, w, session)
		if err != nil {
			return noteMsg{err: fmt.Errorf("attach %s on %s: %w", session, w.Host, err)}
		}
		return handOver{tea.ExecProcess(exec.Command(argv[0], argv[1:]...), func(err error) tea.Msg {
			if err != nil {
				return noteMsg{err: fmt.Errorf("attach %s on %s: %w", session, w.Host, err)}
			}
			return noteMsg{text: "back from " + session + " on " + w.Host}
		})}
	}
}

// handOver carries a command that takes the terminal; Update returns it.
type handOver struct{ cmd tea.Cmd }

// attachCommand is tmux.Client.Attach as a command the program hands its terminal to.
type attachCommand struct {
	client *tmux.Client
	name   string
	term   tmux.Terminal
}

func (a *attachCommand) Run() error            { return a.client.Attach(context.Background(), a.name, &a.term) }
func (a *attachCommand) SetStdin(r io.Reader)  { a.term.In = r }
func (a *attachCommand) SetStdout(w io.Writer) { a.term.Out = w }
func (a *attachCommand) SetStderr(w io.Writer) { a.term.Err = w }

// Page opens a file in $PAGER (less when unset), the dashboard leaving the
// screen until the pager ends.
func (c Controls) Page(path string) tea.Cmd {
	pager := strings.TrimSpace(c.Getenv("PAGER"))
	if pager == "" {
		pager = "less"
	}
	argv, err := shellword.Split(pager)
	if err != nil || len(argv) == 0 {
		return func() tea.Msg { return noteMsg{err: fmt.Errorf("$PAGER %q: %v", pager, err)} }
	}
	cmd := exec.Command(argv[0], append(argv[1:], path)...)
	cmd.Env = c.Environ
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		if err != nil {
			return noteMsg{err: fmt.Errorf("%s: %w", pager, err)}
		}
		return noteMsg{}
	})
}
