package hosts_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/proc"
	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/internal/wake"
	"github.com/story-automator/story-automator/workflows"
)

// realHost is a Host on the test's sshd, through its ssh_config; the
// connection is closed when the test ends.
func realHost(t *testing.T, srv *sshd.Server, sshCommand string) *hosts.Host {
	t.Helper()
	h, err := hosts.New(workflows.Host{Name: "box", SSH: sshd.Alias, Dir: srv.WorkDir, SSHCommand: sshCommand},
		hosts.Options{ControlDir: filepath.Join(srv.Dir, "ctl")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// Commands reach the host with their words intact and run in its own
// environment; five commands ride one ssh connection.
func TestRealSSHRoundTripsOverOneConnection(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	h := realHost(t, srv, srv.SSHCommand())
	odd := `it's "quoted" $HOME; a b`
	res, err := h.Run(ctx(t), hosts.Request{Args: []string{"printf", "%s|", odd, "$HOME"}})
	if err != nil || string(res.Stdout) != odd+"|$HOME|" {
		t.Fatalf("printf: %q %v", res.Stdout, err)
	}
	res, err = h.Script(ctx(t), `printf %s "$HOME"`, strings.NewReader(""))
	if err != nil || string(res.Stdout) != srv.Home {
		t.Fatalf("HOME on the host = %q (%v), want %s", res.Stdout, err, srv.Home)
	}
	for range 3 {
		if _, err := h.Run(ctx(t), hosts.Request{Args: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err = h.Run(ctx(t), hosts.Request{Args: []string{"cat"}, Stdin: strings.NewReader("piped\n")})
	if err != nil || string(res.Stdout) != "piped\n" {
		t.Fatalf("cat: %q %v", res.Stdout, err)
	}
	if n := srv.Accepted(); n != 1 {
		t.Fatalf("sshd accepted %d connections for 6 commands, want 1:\n%s", n, strings.Join(srv.Log(), "\n"))
	}
	if s := h.Stats(); s.Connects != 1 || s.Commands != 6 {
		t.Fatalf("stats %+v", s)
	}
	if _, err := h.Run(ctx(t), hosts.Request{Args: []string{"sh", "-c", "exit 7"}}); !isExit(err, 7) {
		t.Fatalf("exit 7: %v", err)
	}
	if err := h.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.ControlPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("control socket left after Close: %v", err)
	}
}

func isExit(err error, code int) bool {
	var ee *hosts.ExitError
	return errors.As(err, &ee) && ee.Code == code
}

// sshd killed with its sessions: the next command is refused as
// unreachable; once sshd is back the host connects again by itself.
func TestRealSSHReconnectsAfterTheServerRestarts(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	h := realHost(t, srv, srv.SSHCommand())
	if _, err := h.Run(ctx(t), hosts.Request{Args: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	_, err := h.Run(ctx(t), hosts.Request{Args: []string{"true"}, Retry: true})
	var ce *coded.Error
	if !errors.Is(err, hosts.ErrUnreachable) || !errors.As(err, &ce) || ce.Code != hosts.CodeUnreachable {
		t.Fatalf("with sshd down: %v", err)
	}
	srv.Restart()
	res, err := h.Run(ctx(t), hosts.Request{Args: []string{"echo", "back"}, Retry: true})
	if err != nil || string(res.Stdout) != "back\n" {
		t.Fatalf("after restart: %q %v", res.Stdout, err)
	}
	if n := srv.Accepted(); n != 2 {
		t.Fatalf("sshd accepted %d connections, want 2 (one before, one after)", n)
	}
	for range 2 {
		if _, err := h.Run(ctx(t), hosts.Request{Args: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Accepted(); n != 2 {
		t.Fatalf("the new connection is not reused: %d accepted", n)
	}
}

// A host whose key ssh does not know is refused with the way to trust it,
// and the key is not recorded behind the user's back.
func TestRealSSHRefusesAnUnknownHostKey(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	empty := filepath.Join(srv.Dir, "empty_known_hosts")
	cfg := filepath.Join(srv.Dir, "ssh_config_unknown")
	body, err := os.ReadFile(srv.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(string(body), srv.KnownHosts, empty)), 0o600); err != nil {
		t.Fatal(err)
	}
	h := realHost(t, srv, "ssh -F "+cfg)
	_, err = h.Run(ctx(t), hosts.Request{Args: []string{"true"}})
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != hosts.CodeHostKeyUnknown || !strings.Contains(ce.Action, "ssh -F "+cfg+" "+sshd.Alias) {
		t.Fatalf("err = %v (%+v)", err, ce)
	}
	if data, _ := os.ReadFile(empty); len(data) != 0 {
		t.Fatalf("known_hosts was written: %s", data)
	}
	if srv.Accepted() != 0 {
		t.Fatal("sshd accepted a login with an unknown host key")
	}
}

// Commands started at once on a new host still open one connection: the
// first makes it, the others wait for it and ride it.
func TestRealSSHConcurrentCommandsShareOneConnection(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	h := realHost(t, srv, srv.SSHCommand())
	errs := make(chan error, 6)
	for i := range 6 {
		go func() {
			res, err := h.Run(ctx(t), hosts.Request{Args: []string{"echo", strings.Repeat("x", i)}})
			if err == nil && strings.TrimSpace(string(res.Stdout)) != strings.Repeat("x", i) {
				err = errors.New("wrong output " + string(res.Stdout))
			}
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Accepted(); n != 1 {
		t.Fatalf("sshd accepted %d connections for 6 concurrent commands, want 1", n)
	}
}

// A master killed outright leaves its socket behind; the next process to
// connect replaces it with one new connection, not a stray one beside it.
func TestRealSSHReplacesAStaleSocket(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	first := realHost(t, srv, srv.SSHCommand())
	if _, err := first.Run(ctx(t), hosts.Request{Args: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ssh", "-F", srv.ConfigFile, "-S", first.ControlPath(), "-O", "check", sshd.Alias).CombinedOutput()
	m := regexp.MustCompile(`pid=(\d+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("ssh -O check: %s %v", out, err)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	gone := wake.New()
	defer gone.Close()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := gone.Process(pid); err != nil {
		t.Fatal(err)
	}
	for proc.Alive(pid) {
		<-gone.C
	}
	if _, err := os.Stat(first.ControlPath()); err != nil {
		t.Fatalf("the killed master left no socket: %v", err)
	}
	second := realHost(t, srv, srv.SSHCommand())
	for range 2 {
		if _, err := second.Run(ctx(t), hosts.Request{Args: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, s := srv.Accepted(), second.Stats(); n != 2 || s.Connects != 1 {
		t.Fatalf("sshd accepted %d connections (want 2), second host %+v\n%s", n, s, strings.Join(srv.Log(), "\n"))
	}
}
