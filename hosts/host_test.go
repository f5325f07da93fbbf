package hosts_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/hosts/hoststest"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/workflows"
)

func newHost(t *testing.T, fake *hoststest.Executor, env map[string]string, own string) *hosts.Host {
	t.Helper()
	h, err := hosts.New(workflows.Host{Name: "big", SSH: "me@big", Dir: "/srv/sa", SSHCommand: own},
		hosts.Options{ControlDir: filepath.Join(t.TempDir(), "ctl"), Exec: fake, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The first command checks for a master, starts one, then runs over it;
// later commands reuse it. Every call keeps BatchMode and the socket and
// never turns host-key checking off; the command's words are quoted.
func TestRunConnectsOnceAndQuotes(t *testing.T) {
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		if hoststest.Op(argv) == "check" {
			return hoststest.Reply{Exit: 255, Stderr: "Control socket connect: No such file or directory"}
		}
		return hoststest.Reply{Stdout: "out"}
	}}
	h := newHost(t, fake, map[string]string{hosts.EnvSSHCommand: "ssh -F '/etc/my ssh/config'"}, "")
	for range 3 {
		res, err := h.Run(context.Background(), hosts.Request{Args: []string{"echo", "it's $HOME"}})
		if err != nil || string(res.Stdout) != "out" {
			t.Fatalf("run: %q %v", res.Stdout, err)
		}
	}
	calls := fake.Calls()
	var ops []string
	for _, c := range calls {
		ops = append(ops, hoststest.Op(c))
		if !slices.Equal(c[:3], []string{"ssh", "-F", "/etc/my ssh/config"}) || !slices.Contains(c, "BatchMode=yes") ||
			!slices.Contains(c, h.ControlPath()) || strings.Contains(strings.Join(c, " "), "StrictHostKeyChecking") {
			t.Errorf("argv %q", c)
		}
	}
	line := `echo "it's \$HOME"`
	want := []string{"check", "master", line, line, line}
	if !slices.Equal(ops, want) {
		t.Fatalf("ops %q, want %q", ops, want)
	}
	if s := h.Stats(); s.Connects != 1 || s.Commands != 3 || s.RoundTrips() != 4 {
		t.Fatalf("stats %+v", s)
	}
}

// A host's own sshCommand wins over the environment; both fall back to ssh.
func TestSSHCommandPrecedence(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	for _, c := range []struct {
		own, env string
		want     []string
	}{
		{"", "", []string{"ssh"}},
		{"", "ssh -F /x", []string{"ssh", "-F", "/x"}},
		{"/opt/bin/ssh -p 2222", "ssh -F /x", []string{"/opt/bin/ssh", "-p", "2222"}},
	} {
		got, err := hosts.SSHCommand(c.own, env(c.env))
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SSHCommand(%q, %q) = %q, %v", c.own, c.env, got, err)
		}
	}
	if _, err := hosts.SSHCommand("", env("ssh | tee")); err == nil || !strings.Contains(err.Error(), hosts.EnvSSHCommand) {
		t.Errorf("err = %v", err)
	}
}

// ssh's failures become coded errors with the one thing to do; a command
// that itself exits non-zero is an ExitError.
func TestRunClassifiesFailures(t *testing.T) {
	cases := []struct {
		stderr string
		exit   int
		code   string
		cause  error
		action string
	}{
		{"No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.", 255, hosts.CodeHostKeyUnknown, hosts.ErrHostKey, "connect once with `ssh -F /c me@big`"},
		{"@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @\nHost key verification failed.", 255, hosts.CodeHostKeyChanged, hosts.ErrHostKey, "ssh-keygen -R"},
		{"me@big: Permission denied (publickey).", 255, hosts.CodeAuth, hosts.ErrAuth, "without a password prompt"},
		{"ssh: connect to host big port 22: Connection refused", 255, hosts.CodeUnreachable, hosts.ErrUnreachable, "`ssh -F /c me@big true` works"},
	}
	for _, c := range cases {
		fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
			if hoststest.Op(argv) == "check" {
				return hoststest.Reply{Exit: 255}
			}
			return hoststest.Reply{Exit: c.exit, Stderr: c.stderr}
		}}
		h := newHost(t, fake, nil, "ssh -F /c")
		_, err := h.Run(context.Background(), hosts.Request{Args: []string{"true"}})
		var ce *coded.Error
		if !errors.As(err, &ce) || ce.Code != c.code || !errors.Is(err, c.cause) || !strings.Contains(ce.Action, c.action) {
			t.Errorf("%s: err = %v (%+v)", c.code, err, ce)
		}
	}
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		if op := hoststest.Op(argv); op == "check" || op == "master" {
			return hoststest.Reply{}
		}
		return hoststest.Reply{Exit: 3, Stderr: "boom"}
	}}
	h := newHost(t, fake, nil, "")
	_, err := h.Run(context.Background(), hosts.Request{Args: []string{"false"}})
	var ee *hosts.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || ee.Stderr != "boom" {
		t.Fatalf("err = %v", err)
	}
}

// A connection lost under a command marked Retry is made again and the
// command runs once more; without Retry the loss is returned.
func TestRunRetriesAfterALostConnection(t *testing.T) {
	lost := 1
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		switch hoststest.Op(argv) {
		case "check", "master":
			return hoststest.Reply{}
		}
		if lost > 0 {
			lost--
			return hoststest.Reply{Exit: 255, Stderr: "Connection to 1.2.3.4 closed by remote host."}
		}
		return hoststest.Reply{Stdout: "ok"}
	}}
	h := newHost(t, fake, nil, "")
	res, err := h.Run(context.Background(), hosts.Request{Args: []string{"uptime"}, Retry: true})
	if err != nil || string(res.Stdout) != "ok" {
		t.Fatalf("run: %q %v", res.Stdout, err)
	}
	var ops []string
	for _, c := range fake.Calls() {
		ops = append(ops, hoststest.Op(c))
	}
	if !slices.Equal(ops, []string{"check", "uptime", "check", "uptime"}) {
		t.Fatalf("ops %q", ops)
	}
	lost = 1
	if _, err := h.Run(context.Background(), hosts.Request{Args: []string{"uptime"}}); !errors.Is(err, hosts.ErrUnreachable) {
		t.Fatalf("err = %v", err)
	}
}

func TestPlatform(t *testing.T) {
	for in, want := range map[string]string{
		"Linux x86_64\n": "linux/amd64", "Linux aarch64": "linux/arm64", "Darwin arm64": "darwin/arm64",
		"Darwin x86_64": "darwin/amd64", "FreeBSD amd64": "", "Linux riscv64": "", "": "",
	} {
		if got := hosts.Platform(in); got != want {
			t.Errorf("Platform(%q) = %q, want %q", in, got, want)
		}
	}
}

// ControlDir stays under the state directory when a socket path fits, and
// moves to a short private directory when it would not.
func TestControlDirFitsASocketPath(t *testing.T) {
	if got := hosts.ControlDir("/p/.story-automator"); got != "/p/.story-automator/ssh" {
		t.Errorf("short: %s", got)
	}
	long := "/home/someone/projects/" + strings.Repeat("deep/", 12) + ".story-automator"
	got := hosts.ControlDir(long)
	if strings.HasPrefix(got, long) || len(got)+1+12+1+8+17 > 103 {
		t.Errorf("long: %s (%d)", got, len(got))
	}
	if hosts.ControlDir(long) != got {
		t.Errorf("not stable")
	}
}

// A command whose connection dies under it exits 255 and says nothing:
// with no master answering any more it is a lost connection; with the
// master alive it is the command's own exit status.
func TestRunSilent255(t *testing.T) {
	masterUp := true
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		switch hoststest.Op(argv) {
		case "check":
			if masterUp {
				return hoststest.Reply{}
			}
			return hoststest.Reply{Exit: 255}
		case "master":
			return hoststest.Reply{}
		}
		return hoststest.Reply{Exit: 255}
	}}
	h := newHost(t, fake, nil, "")
	var ee *hosts.ExitError
	if _, err := h.Run(context.Background(), hosts.Request{Args: []string{"exit255"}}); !errors.As(err, &ee) || ee.Code != 255 {
		t.Fatalf("master alive: err = %v", err)
	}
	masterUp = false
	if _, err := h.Run(context.Background(), hosts.Request{Args: []string{"exit255"}}); !errors.Is(err, hosts.ErrUnreachable) {
		t.Fatalf("master gone: err = %v", err)
	}
}

// GitSSH is the host's ssh with its connection's options, quoted for the
// shell git hands it to; each git call counts one round trip.
func TestGitSSHRidesTheConnection(t *testing.T) {
	fake := &hoststest.Executor{}
	h := newHost(t, fake, nil, `ssh -F "/my dir/cfg"`)
	line, err := h.GitSSH(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(line, `ssh -F '/my dir/cfg' -o 'BatchMode=yes' -o 'ControlMaster=auto'`) || !strings.Contains(line, "-S "+h.ControlPath()) || !strings.HasSuffix(line, " -T") {
		t.Fatalf("GIT_SSH_COMMAND %q", line)
	}
	before := h.Stats().RoundTrips()
	if lost := h.GitRoundTrip(context.Background(), false); lost || h.Stats().RoundTrips() != before+1 {
		t.Fatalf("lost %v, round trips %d → %d", lost, before, h.Stats().RoundTrips())
	}
	if h.GitURL("/srv/sa/repos/p.git") != "me@big:/srv/sa/repos/p.git" {
		t.Fatalf("url %s", h.GitURL("/srv/sa/repos/p.git"))
	}
}
