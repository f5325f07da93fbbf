package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/internal/shellcmd"
	"github.com/story-automator/story-automator/workflows"
)

// Sink is one place a notification goes. Send makes one try, within ctx's
// deadline; the Sender retries.
type Sink interface {
	// Name says which sink it is, for people: "desktop", "command",
	// "webhook ntfy.sh (ntfy)". It never shows a URL's path or a secret.
	Name() string
	Send(ctx context.Context, ev Event) error
}

// Machine is what a sink needs of the process: its environment.
type Machine struct {
	Environ []string
	// Dir is where a command runs: the project.
	Dir string
	// GOOS picks the desktop notifier; runtime.GOOS when empty.
	GOOS string
}

func (m Machine) getenv(key string) string {
	for i := len(m.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(m.Environ[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Sinks are the sinks the policy sets, in a fixed order: desktop, command,
// then each webhook.
func Sinks(n workflows.Notify, m Machine) []Sink {
	var out []Sink
	if n.Desktop {
		out = append(out, &Desktop{Machine: m})
	}
	if strings.TrimSpace(n.Command) != "" {
		out = append(out, &Command{Script: n.Command, Machine: m})
	}
	for i, w := range n.Webhooks {
		h := &Webhook{Hook: w, Machine: m}
		if len(n.Webhooks) > 1 {
			h.index = i + 1
		}
		out = append(out, h)
	}
	return out
}

// Desktop shows the event as a desktop notification: notify-send on Linux,
// osascript on macOS.
type Desktop struct{ Machine Machine }

// Name is "desktop".
func (d *Desktop) Name() string { return "desktop" }

// Send runs the desktop notifier once.
func (d *Desktop) Send(ctx context.Context, ev Event) error {
	var argv []string
	switch goos := orWord(d.Machine.GOOS, runtime.GOOS); goos {
	case "linux", "freebsd", "openbsd", "netbsd":
		urgency := "normal"
		if ev.Urgent() {
			urgency = "critical"
		}
		argv = []string{"notify-send", "--app-name=story-automator", "--urgency=" + urgency, "--", ev.Title, ev.Message}
	case "darwin":
		// The texts go in as arguments, so nothing in them is read as AppleScript.
		argv = []string{"osascript", "-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)",
			"-e", "end run", ev.Title, ev.Message}
	default:
		return permanent{fmt.Errorf("no desktop notifier on %s", goos)}
	}
	prog, err := lookPath(argv[0], d.Machine.getenv("PATH"))
	if err != nil {
		return permanent{err}
	}
	return runProgram(ctx, prog, argv[1:], d.Machine.Environ, nil, nil)
}

// Command runs the user's shell command with the event as JSON on stdin
// (and its kind in STORY_AUTOMATOR_NOTIFY_EVENT).
type Command struct {
	Script  string
	Machine Machine
}

// Name is "command".
func (c *Command) Name() string { return "command" }

// Send runs the command once.
func (c *Command) Send(ctx context.Context, ev Event) error {
	data, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode the event: %w", err)
	}
	out := &shellcmd.CappedBuffer{Limit: 4096}
	env := append(append([]string{}, c.Machine.Environ...), "STORY_AUTOMATOR_NOTIFY_EVENT="+ev.Kind)
	res := shellcmd.Run(ctx, shellcmd.Command{Script: c.Script, Dir: c.Machine.Dir, Env: env,
		Stdin: bytes.NewReader(append(data, '\n')), Stdout: out, Stderr: out})
	switch {
	case errors.Is(res.CtxErr, context.DeadlineExceeded):
		return fmt.Errorf("the command did not finish within its time (killed)")
	case res.Err != nil:
		if tail := shellcmd.Tail(out.Bytes(), 200); tail != "" {
			return fmt.Errorf("the command failed (%v): %s", res.Err, tail)
		}
		return fmt.Errorf("the command failed (%v)", res.Err)
	}
	return nil
}

// Webhook POSTs the event to a URL.
type Webhook struct {
	Hook    workflows.Webhook
	Machine Machine
	// Client makes the POST; http.DefaultClient when nil.
	Client *http.Client
	// index numbers the webhook when there are several.
	index int
}

// Name is "webhook HOST (FORMAT)", numbered when there are several.
func (w *Webhook) Name() string {
	host := "(" + w.Hook.URL + ")"
	if u, err := url.Parse(w.Hook.URL); err == nil && u.Host != "" {
		host = u.Host
	}
	if w.index > 0 {
		return fmt.Sprintf("webhook %d %s (%s)", w.index, host, w.Hook.Format)
	}
	return fmt.Sprintf("webhook %s (%s)", host, w.Hook.Format)
}

// Send makes one POST within ctx's deadline.
func (w *Webhook) Send(ctx context.Context, ev Event) error {
	req, err := WebhookRequest(w.Hook, ev, w.Machine.getenv)
	if err != nil {
		return permanent{err}
	}
	client := w.Client
	if client == nil {
		client = http.DefaultClient
	}
	within := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		within = time.Until(dl).Round(time.Millisecond)
	}
	return post(ctx, client, req, within)
}

// runProgram runs prog with args and waits, killed with its process group
// at ctx's end; the last of its output says why when it fails. stdout, when
// not nil, gets its standard output instead.
func runProgram(ctx context.Context, prog string, args, env []string, stdin io.Reader, stdout io.Writer) error {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = env
	cmd.Stdin = stdin
	errOut := &shellcmd.CappedBuffer{Limit: 4096}
	cmd.Stderr, cmd.Stdout = errOut, errOut
	if stdout != nil {
		cmd.Stdout = stdout
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s did not finish within its time (killed)", filepath.Base(prog))
	case err != nil:
		if tail := shellcmd.Tail(errOut.Bytes(), 200); tail != "" {
			return fmt.Errorf("%s failed (%v): %s", filepath.Base(prog), err, tail)
		}
		return fmt.Errorf("%s failed: %w", filepath.Base(prog), err)
	}
	return nil
}

// lookPath finds name in the directories of path (a PATH value).
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed (not on the PATH)", name)
}
