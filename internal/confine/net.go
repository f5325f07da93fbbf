package confine

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/story-automator/story-automator/internal/netproxy"
)

// NetCommand and BridgeCommand are this program's hidden commands that
// narrow a confined command's network (Policy.Net): NetCommand runs
// outside, serves the proxy and starts the sandbox; BridgeCommand runs
// inside it (Linux), before the command.
const (
	NetCommand    = "sandbox-net"
	BridgeCommand = "sandbox-bridge"
)

// Net narrows a confined command's network to some hosts. The command
// runs with no network of its own (Linux: a network namespace with a
// loopback only; macOS: Seatbelt allows only the proxy's loopback port)
// and its proxy variables name an HTTP proxy, run by Exe outside the
// sandbox, that lets only Allow through and refuses the rest with 403.
type Net struct {
	// Exe is this program: NetCommand outside, BridgeCommand inside.
	Exe string `json:"exe"`
	// Allow are the destinations (netproxy.ParseRule: host, host:port,
	// *.domain). One on this machine's loopback with a port (a model
	// endpoint there) can also be dialled directly inside.
	Allow []string `json:"allow"`
	// Log is a file the proxy appends a line to per request, allowed or
	// refused ("" = none).
	Log string `json:"log,omitempty"`
}

// Socket names inside the child's private temp folder.
const (
	netSocket = ".story-automator-net.sock"
	bridgeExe = ".story-automator-bridge"
)

// netArgv is argv under p with the network narrowed: this program's
// NetCommand with the policy, which does the rest when it runs.
func netArgv(p Policy, argv []string) ([]string, error) {
	n := p.Net
	if !filepath.IsAbs(n.Exe) {
		return nil, fmt.Errorf("confine: the network proxy's program %q is not absolute", n.Exe)
	}
	if _, err := netproxy.ParseAllow(n.Allow); err != nil {
		return nil, err
	}
	if p.TmpDir == "" || p.Network || p.Nests {
		return nil, errors.New("confine: a narrowed network needs a private temp folder, no network of its own and no nesting")
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return append([]string{n.Exe, NetCommand, string(b), "--"}, argv...), nil
}

// RunNet is NetCommand: args are the policy (JSON) and "--" and the
// command. It serves the proxy, runs the command under the policy and
// returns its exit status.
func RunNet(args []string, stderr io.Writer) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintf(stderr, "story-automator %s: want POLICY -- COMMAND…\n", NetCommand)
		return 2
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil || p.Net == nil {
		fmt.Fprintf(stderr, "story-automator %s: bad policy: %v\n", NetCommand, err)
		return 2
	}
	argv, cleanup, err := netStart(p, args[2:])
	if err != nil {
		fmt.Fprintf(stderr, "story-automator: the sandbox's network proxy: %v\n", err)
		return 1
	}
	defer cleanup()
	return runChild(argv, os.Environ())
}

// netStart opens the proxy's listener, serves it, and returns the sandbox
// argv that reaches it.
func netStart(p Policy, argv []string) ([]string, func(), error) {
	rules, err := netproxy.ParseAllow(p.Net.Allow)
	if err != nil {
		return nil, nil, err
	}
	r, err := resolve(p)
	if err != nil {
		return nil, nil, err
	}
	var log io.Writer
	var logFile *os.File
	if p.Net.Log != "" {
		if logFile, err = os.OpenFile(p.Net.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600); err != nil {
			return nil, nil, err
		}
		log = logFile
	}
	proxy := &netproxy.Proxy{Allow: rules, Log: log}
	var ln net.Listener
	var out []string
	switch runtime.GOOS {
	case "linux":
		if ln, err = listenUnix(filepath.Join(r.TmpDir, netSocket)); err != nil {
			break
		}
		bridge := []string{"/tmp/" + bridgeExe, BridgeCommand, "--socket", "/tmp/" + netSocket}
		for _, f := range rules.Loopback() {
			bridge = append(bridge, "--forward", f.Listen+"="+f.Dest)
		}
		r.binds = [][2]string{{p.Net.Exe, "/tmp/" + bridgeExe}}
		prog, perr := lookSandbox("bwrap")
		if perr != nil {
			err = perr
			break
		}
		out = append([]string{prog}, bwrapArgs(r, append(append(bridge, "--"), argv...))...)
	case "darwin":
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			break
		}
		port := ln.Addr().(*net.TCPAddr).Port
		r.proxyPorts = append([]int{port}, loopbackPorts(rules)...)
		var env []string
		for k, v := range netproxy.Env("http://" + ln.Addr().String()) {
			env = append(env, k+"="+v)
		}
		prog, perr := lookSandbox("sandbox-exec")
		if perr != nil {
			err = perr
			break
		}
		out = append([]string{prog}, seatbeltArgs(r, append(append([]string{"/usr/bin/env"}, env...), argv...))...)
	default:
		err = fmt.Errorf("no sandbox for commands on %s", runtime.GOOS)
	}
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		if logFile != nil {
			logFile.Close()
		}
		return nil, nil, err
	}
	go func() { _ = proxy.Serve(ln) }()
	return out, func() {
		ln.Close()
		if logFile != nil {
			logFile.Close()
		}
	}, nil
}

// lookSandbox is the sandbox program's path.
func lookSandbox(prog string) (string, error) {
	path, err := exec.LookPath(prog)
	if err != nil {
		return "", unavailable(prog, "is not on the PATH")
	}
	return path, nil
}

// loopbackPorts are the ports of the loopback rules (macOS: the command
// may dial them directly).
func loopbackPorts(rules netproxy.Allow) []int {
	var ports []int
	for _, f := range rules.Loopback() {
		_, port, _ := net.SplitHostPort(f.Listen)
		if n, err := strconv.Atoi(port); err == nil {
			ports = append(ports, n)
		}
	}
	return ports
}

// listenUnix listens on a Unix socket at path, which may be longer than
// a socket address holds (a state folder deep in a home): through its
// folder's descriptor, /proc/self/fd/N/name, on Linux.
func listenUnix(path string) (net.Listener, error) {
	_ = os.Remove(path)
	if len(path) < 100 {
		return net.Listen("unix", path)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)))
}

// RunBridge is BridgeCommand, inside the sandbox: args are --socket PATH,
// --forward LISTEN=DEST (repeated), "--" and the command, which it runs
// with the proxy variables set, returning its exit status.
func RunBridge(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(BridgeCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "the proxy's Unix socket")
	var fwd []netproxy.Forward
	fs.Func("forward", "LISTEN=DEST", func(s string) error {
		l, d, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("want LISTEN=DEST, got %q", s)
		}
		fwd = append(fwd, netproxy.Forward{Listen: l, Dest: d})
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *socket == "" || fs.NArg() == 0 {
		fmt.Fprintf(stderr, "story-automator %s: want --socket PATH [--forward LISTEN=DEST]… -- COMMAND…\n", BridgeCommand)
		return 2
	}
	b := &netproxy.Bridge{Socket: *socket, Forward: fwd}
	if err := b.Start(); err != nil {
		fmt.Fprintf(stderr, "story-automator: the sandbox's network bridge: %v\n", err)
		return 1
	}
	defer b.Close()
	env := os.Environ()
	for k, v := range netproxy.Env(b.ProxyURL()) {
		env = append(env, k+"="+v)
	}
	return runChild(fs.Args(), env)
}

// runChild runs argv with this process's standard streams and env, passes
// on the signals that stop it, and returns its exit status (a command
// killed by a signal: this process ends by the same signal).
func runChild(argv, env []string) int {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "story-automator: %v\n", err)
		return 127
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	sigs := make(chan os.Signal, 4)
	stops := []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT}
	signal.Notify(sigs, stops...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "story-automator: %v\n", err)
		return 127
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}
