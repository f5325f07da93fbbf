package confine

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testtier"
)

// helperEnv makes this test binary act out one command under the sandbox
// (TestMain): write FILE, read FILE, list DIR, connect ADDR.
const helperEnv = "CONFINE_TEST_HELPER"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case NetCommand:
			os.Exit(RunNet(os.Args[2:], os.Stderr))
		case BridgeCommand:
			os.Exit(RunBridge(os.Args[2:], os.Stderr))
		}
	}
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(helper(h))
	}
	os.Exit(m.Run())
}

func helper(h string) int {
	verb, arg, _ := strings.Cut(h, " ")
	var err error
	switch verb {
	case "write":
		err = os.WriteFile(arg, []byte("planted"), 0o644)
	case "read":
		var b []byte
		b, err = os.ReadFile(arg)
		fmt.Printf("%q", b)
	case "list":
		var es []os.DirEntry
		es, err = os.ReadDir(arg)
		fmt.Print(len(es))
	case "unmount-read":
		// The escape a process with capabilities has: unmount what
		// hides a folder, then read it.
		dir, file, _ := strings.Cut(arg, " ")
		_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		var b []byte
		b, err = os.ReadFile(file)
		fmt.Printf("%q", b)
	case "get", "proxyget":
		// get: as a Go program does (loopback addresses never through
		// a proxy); proxyget: through the proxy HTTP_PROXY names.
		c := http.DefaultClient
		if verb == "proxyget" {
			u, perr := url.Parse(os.Getenv("HTTP_PROXY"))
			if perr != nil || u.Host == "" {
				fmt.Fprintf(os.Stderr, "no HTTP_PROXY: %q", os.Getenv("HTTP_PROXY"))
				return 1
			}
			c = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
		}
		var resp *http.Response
		if resp, err = c.Get(arg); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Printf("%d %s", resp.StatusCode, b)
		}
	case "connect":
		var c net.Conn
		c, err = net.DialTimeout("tcp", arg, 5*time.Second)
		if err == nil {
			_, err = c.Write([]byte("wrapped\n"))
			c.Close()
		}
	}
	if err != nil {
		fmt.Fprint(os.Stderr, err)
		return 1
	}
	return 0
}

// requireBwrap fails under CI=true, where bubblewrap must be installed.
func requireBwrap(t *testing.T) {
	t.Helper()
	testtier.Integration(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap is missing: .ci/run installs it (%s)", Install)
		}
		t.Skipf("bwrap is not installed (%s)", Install)
	}
}

// helperBin is a copy of this test binary in a folder of its own (the
// binary lies under /tmp, which the sandbox replaces): the sandbox sees it
// when that folder is in the policy's Writable.
func helperBin(t *testing.T) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "helper")
	b, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// run runs the helper binary as helper h, wrapped in p with the binary's
// folder visible (or not wrapped, when wrap is false); its output and
// whether it succeeded.
func run(t *testing.T, p Policy, wrap bool, h string) (string, bool) {
	t.Helper()
	dir, bin := helperBin(t)
	p.Writable = append(p.Writable, dir)
	argv := []string{bin}
	if wrap {
		var err error
		if argv, err = Wrap(p, argv); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), helperEnv+"="+h)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// outsideDir is a folder outside /tmp (which the sandbox replaces), as a
// sibling of the project or the home folder would be.
func outsideDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "confine-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestWrappedCommandWritesOnlyItsFoldersAndTmp(t *testing.T) {
	requireBwrap(t)
	proj, tmp, outside := t.TempDir(), t.TempDir(), outsideDir(t)
	hooks := filepath.Join(proj, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	p := Policy{Writable: []string{proj}, TmpDir: tmp, ReadOnly: []string{hooks}}
	if out, ok := run(t, p, true, "write "+filepath.Join(proj, "ok")); !ok {
		t.Fatalf("cannot write its folder: %s", out)
	}
	if out, ok := run(t, p, true, "write /tmp/ok"); !ok {
		t.Fatalf("cannot write /tmp: %s", out)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, "ok")); err != nil || string(b) != "planted" {
		t.Fatalf("/tmp is not the private temp folder: %q %v", b, err)
	}
	if out, ok := run(t, p, true, "write "+filepath.Join(hooks, "pre-commit")); ok {
		t.Fatalf("wrote the read-only folder inside its folder: %s", out)
	}
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); !os.IsNotExist(err) {
		t.Fatalf("the hook landed: %v", err)
	}
	target := filepath.Join(outside, "escaped")
	if out, ok := run(t, p, false, "write "+target); !ok {
		t.Fatalf("control: unwrapped, the write must land: %s", out)
	}
	if err := os.Remove(target); err != nil {
		t.Fatal(err)
	}
	out, ok := run(t, p, true, "write "+target)
	if ok || !strings.Contains(out, "read-only file system") {
		t.Fatalf("wrapped write outside: ok=%v %s", ok, out)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the write outside landed: %v", err)
	}
}

func TestWrappedCommandCannotReadHiddenPaths(t *testing.T) {
	requireBwrap(t)
	// The home folder outside /tmp, which the sandbox replaces.
	home, proj := outsideDir(t), t.TempDir()
	ssh := filepath.Join(home, ".ssh")
	if err := os.Mkdir(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(ssh, "id_ed25519")
	netrc := filepath.Join(home, ".netrc")
	inProj := filepath.Join(proj, ".env")
	for _, f := range []string{key, netrc, inProj} {
		if err := os.WriteFile(f, []byte("SECRET"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Writable: []string{proj}, ReadDeny: append(CredentialPaths(home), inProj)}
	if out, _ := run(t, p, false, "read "+key); out != `"SECRET"` {
		t.Fatalf("control: unwrapped, the key reads %s", out)
	}
	for _, f := range []string{netrc, inProj} {
		if out, ok := run(t, p, true, "read "+f); !ok || out != `""` {
			t.Fatalf("hidden file %s reads %s (ok=%v)", f, out, ok)
		}
	}
	if out, ok := run(t, p, true, "list "+ssh); !ok || out != "0" {
		t.Fatalf("hidden folder lists %s entries (ok=%v)", out, ok)
	}
	if out, ok := run(t, p, true, "read "+key); ok || strings.Contains(out, "SECRET") {
		t.Fatalf("the key in the hidden folder: ok=%v %s", ok, out)
	}
	if out, ok := run(t, p, true, "write "+filepath.Join(ssh, "authorized_keys")); ok {
		t.Fatalf("wrote into the hidden folder: %s", out)
	}
	// Also as root: no capability is left to unmount what hides it.
	if out, _ := run(t, p, true, "unmount-read "+ssh+" "+key); strings.Contains(out, "SECRET") {
		t.Fatalf("unmounted the hidden folder and read the key: %s", out)
	}
}

// listener counts the connections to a loopback port; each one's first
// line tells who made it.
type listener struct {
	addr  string
	lines chan string
}

func listen(t *testing.T) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	l := &listener{addr: ln.Addr().String(), lines: make(chan string, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			l.lines <- strings.TrimSpace(line)
		}
	}()
	return l
}

// next is the first line of the next connection, after a wrapped command
// or the control has ended.
func (l *listener) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-l.lines:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("no connection reached the listener")
		return ""
	}
}

// sentinel connects from this process: once its line arrives, every
// connection made before it has been seen.
func (l *listener) sentinel(t *testing.T) {
	t.Helper()
	c, err := net.Dial("tcp", l.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(c, "sentinel")
	c.Close()
}

func TestWrappedCommandWithoutNetworkReachesNoListener(t *testing.T) {
	requireBwrap(t)
	l := listen(t)
	p := Policy{}
	if out, ok := run(t, p, false, "connect "+l.addr); !ok {
		t.Fatalf("control: unwrapped connect failed: %s", out)
	}
	if got := l.next(t); got != "wrapped" {
		t.Fatalf("control: the listener read %q", got)
	}
	if out, ok := run(t, p, true, "connect "+l.addr); ok {
		t.Fatalf("wrapped connect succeeded: %s", out)
	}
	l.sentinel(t)
	if got := l.next(t); got != "sentinel" {
		t.Fatalf("a connection came from the sandbox before the sentinel: %q", got)
	}
	p.Network = true
	if out, ok := run(t, p, true, "connect "+l.addr); !ok {
		t.Fatalf("network allowed, yet the connect failed: %s", out)
	}
	if got := l.next(t); got != "wrapped" {
		t.Fatalf("network allowed: the listener read %q", got)
	}
}

// Agent CLIs run their tools in a bubblewrap of their own; a command the
// run confines may run there too (and a confined command may start one).
func TestWrapNestsInsideBubblewrap(t *testing.T) {
	requireBwrap(t)
	proj, outside := t.TempDir(), outsideDir(t)
	dir, bin := helperBin(t)
	p := Policy{Writable: []string{proj, dir}}
	inner, err := Wrap(p, []string{bin})
	if err != nil {
		t.Fatal(err)
	}
	// An agent CLI's own sandbox: a user namespace of its own, no network.
	outer := append([]string{"bwrap", "--unshare-user", "--ro-bind", "/", "/", "--dev", "/dev",
		"--unshare-pid", "--proc", "/proc", "--unshare-net", "--bind", proj, proj, "--bind", dir, dir,
		"--bind", outside, outside, "--"}, inner...)
	for _, c := range []struct {
		file string
		ok   bool
	}{{filepath.Join(proj, "ok"), true}, {filepath.Join(outside, "escaped"), false}} {
		cmd := exec.Command(outer[0], outer[1:]...)
		cmd.Env = append(os.Environ(), helperEnv+"=write "+c.file)
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.ok {
			t.Fatalf("nested, write %s: want ok=%v, got %v: %s", c.file, c.ok, err, out)
		}
		if _, err := os.Stat(c.file); os.IsNotExist(err) == c.ok {
			t.Fatalf("nested, write %s: on disk %v, want %v", c.file, !os.IsNotExist(err), c.ok)
		}
	}
}

// A wrapped agent CLI starts its own sandbox inside ours (Gemini CLI's:
// --unshare-all, a fresh /proc). Without Nests that sandbox cannot start
// under ours (no capabilities to map its uids, no /proc it may mount: the
// control); with it, it starts, and what it runs still cannot read the
// hidden paths.
func TestWrapWithNestsLetsAnAgentSandboxStartInside(t *testing.T) {
	requireBwrap(t)
	home := outsideDir(t)
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("sa-nested-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir, bin := helperBin(t)
	agentSandbox := []string{"bwrap", "--unshare-all", "--new-session", "--die-with-parent", "--ro-bind", "/", "/",
		"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--ro-bind", dir, dir, "--", bin}
	for _, nests := range []bool{false, true} {
		p := Policy{Writable: []string{dir}, ReadDeny: []string{filepath.Join(home, ".ssh")}, Network: true, Nests: nests}
		argv, err := Wrap(p, agentSandbox)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), helperEnv+"=read "+secret)
		out, err := cmd.CombinedOutput()
		switch {
		case !nests && (err == nil || !strings.Contains(string(out), "bwrap:")):
			t.Fatalf("without Nests the agent's sandbox started (%v): %s: the control no longer fails", err, out)
		case nests && err == nil:
			t.Fatalf("with Nests the hidden key was read: %s", out)
		case nests && !strings.Contains(string(out), "no such file"):
			t.Fatalf("with Nests the agent's sandbox did not start or read otherwise: %v: %s", err, out)
		}
	}
}

// A narrowed network: inside, the command reaches the allowed server (a
// loopback port, as model-sim's: directly, through the bridge, and through
// the proxy the variables name) and not another one on this machine,
// whose request the proxy refuses with 403 and logs.
func TestWrappedCommandReachesOnlyTheAllowedHosts(t *testing.T) {
	requireBwrap(t)
	var otherHits atomic.Int32
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "allowed") }))
	defer allowed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		_, _ = io.WriteString(w, "other")
	}))
	defer other.Close()
	_, bin := helperBin(t)
	logFile := filepath.Join(t.TempDir(), "net.log")
	p := Policy{TmpDir: t.TempDir(), Net: &Net{Exe: bin, Allow: []string{strings.TrimPrefix(allowed.URL, "http://")}, Log: logFile}}

	for h, want := range map[string]string{"get " + allowed.URL: "200 allowed", "proxyget " + allowed.URL: "200 allowed",
		"proxyget " + other.URL: "403 "} {
		out, ok := run(t, p, true, h)
		if !ok || !strings.HasPrefix(out, want) {
			t.Fatalf("%s: %q (ok %v), want %q…", h, out, ok, want)
		}
	}
	if out, ok := run(t, p, true, "get "+other.URL); ok {
		t.Fatalf("the other server, dialled directly inside: %q", out)
	}
	if out, ok := run(t, p, false, "get "+other.URL); !ok || out != "200 other" {
		t.Fatalf("control: %q", out)
	}
	if n := otherHits.Load(); n != 1 {
		t.Fatalf("the other server answered %d requests, want only the control's", n)
	}
	log, _ := os.ReadFile(logFile)
	if !strings.Contains(string(log), "refused GET "+strings.TrimPrefix(other.URL, "http://")) ||
		!strings.Contains(string(log), "allowed GET "+strings.TrimPrefix(allowed.URL, "http://")) {
		t.Fatalf("the proxy's log:\n%s", log)
	}
}
