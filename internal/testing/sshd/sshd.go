// Package sshd starts a private OpenSSH server for tests: a loopback port,
// a generated host key and client key, a known_hosts and an ssh_config
// file, as the current user, with a HOME and work directory of its own.
package sshd

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/story-automator/story-automator/internal/testtier"
)

// Program is the OpenSSH server the harness runs (Debian's openssh-server).
const Program = "/usr/sbin/sshd"

// Alias is the host name the ssh_config file defines for the server.
const Alias = "sa-test-host"

// Server is a running sshd and the client files that reach it.
type Server struct {
	Port int
	// Dir holds the keys, configs and log; Home is the HOME sessions get
	// and WorkDir a work directory inside it, both unlike the local ones.
	Dir, Home, WorkDir string
	// ConfigFile is an ssh_config naming Alias; KnownHosts holds the host key.
	ConfigFile, KnownHosts string

	t       testing.TB
	cfg     string
	sshd    string // the sshd_config's text but its SetEnv line
	env     map[string]string
	mu      sync.Mutex
	cmd     *exec.Cmd
	log     []string
	changed chan struct{}
}

// Start starts sshd for the test and stops it (and every session) when
// the test ends. It skips the test without sshd or ssh-keygen (fails under
// CI=true, where .ci/run installs openssh-server) and under -short.
func Start(t testing.TB) *Server {
	t.Helper()
	testtier.Integration(t)
	for _, p := range []string{Program, "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("SSHD MISSING: %s: %v (apt-get install openssh-server openssh-client)", p, err)
			}
			t.Skipf("SSHD MISSING: %s not installed (apt-get install openssh-server openssh-client)", p)
		}
	}
	// A short directory: the client's control sockets may live below it.
	dir, err := os.MkdirTemp("", "sa-sshd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{t: t, Dir: dir, Home: filepath.Join(dir, "home"), changed: make(chan struct{}, 1), env: map[string]string{}}
	s.WorkDir = filepath.Join(s.Home, "work")
	s.ConfigFile, s.KnownHosts = filepath.Join(dir, "ssh_config"), filepath.Join(dir, "known_hosts")
	s.cfg = filepath.Join(dir, "sshd_config")
	if err := os.MkdirAll(s.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	s.Port = freePort(t)
	s.writeFiles()
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// SSHCommand is the ssh command line that reaches the server as Alias.
func (s *Server) SSHCommand() string { return "ssh -F " + s.ConfigFile }

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *Server) keygen(path string) string {
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "story-automator-test", "-f", path).CombinedOutput()
	if err != nil {
		s.t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		s.t.Fatal(err)
	}
	return strings.TrimSpace(string(pub))
}

func (s *Server) writeFiles() {
	hostPub := s.keygen(filepath.Join(s.Dir, "host_key"))
	clientPub := s.keygen(filepath.Join(s.Dir, "client_key"))
	u, err := user.Current()
	if err != nil {
		s.t.Fatal(err)
	}
	root := "no"
	if os.Geteuid() == 0 {
		root = "prohibit-password"
		// sshd running as root wants its privilege-separation directory.
		_ = os.MkdirAll("/run/sshd", 0o750)
	}
	sshd := fmt.Sprintf(`ListenAddress 127.0.0.1:%d
HostKey %s/host_key
AuthorizedKeysFile %s/authorized_keys
PidFile none
UsePAM no
StrictModes no
PermitRootLogin %s
PasswordAuthentication no
KbdInteractiveAuthentication no
AuthenticationMethods publickey
PrintMotd no
PrintLastLog no
LogLevel VERBOSE
`, s.Port, s.Dir, s.Dir, root) + s.setEnvLine()
	client := fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User %s
  IdentityFile %s/client_key
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
`, Alias, s.Port, u.Username, s.Dir, s.KnownHosts)
	known := fmt.Sprintf("[127.0.0.1]:%d %s\n", s.Port, strings.Join(strings.Fields(hostPub)[:2], " "))
	s.sshd, _, _ = strings.Cut(sshd, "SetEnv ")
	for path, body := range map[string]string{s.cfg: sshd, s.ConfigFile: client, s.KnownHosts: known,
		filepath.Join(s.Dir, "authorized_keys"): clientPub + "\n"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			s.t.Fatal(err)
		}
	}
}

// start runs sshd and returns once it listens.
func (s *Server) start() {
	cmd := exec.Command(Program, "-D", "-e", "-f", s.cfg)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start sshd: %v", err)
	}
	listening := make(chan bool, 1)
	go s.readLog(bufio.NewScanner(stderr), listening)
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	if !<-listening {
		s.t.Fatalf("sshd did not start:\n%s", strings.Join(s.Log(), "\n"))
	}
}

// readLog keeps sshd's log and says when it listens (or ended first).
func (s *Server) readLog(sc *bufio.Scanner, listening chan<- bool) {
	said := false
	for sc.Scan() {
		s.mu.Lock()
		s.log = append(s.log, sc.Text())
		s.mu.Unlock()
		select {
		case s.changed <- struct{}{}:
		default:
		}
		if !said && strings.Contains(sc.Text(), "Server listening on") {
			listening <- true
			said = true
		}
	}
	if !said {
		listening <- false
	}
}

// Log is sshd's log so far.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// Accepted counts the logins sshd accepted so far: one per ssh connection.
func (s *Server) Accepted() int {
	n := 0
	for _, l := range s.Log() {
		if strings.Contains(l, "Accepted publickey") {
			n++
		}
	}
	return n
}

// Stop kills sshd and every process it started (its sessions and their
// commands), as a crashed or rebooted host would drop them.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	pids := append(descendants(cmd.Process.Pid), cmd.Process.Pid)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = cmd.Wait()
}

// SetEnv gives every session from now on the variables pairs (NAME=value)
// besides HOME and TMUX_TMPDIR (a pair may set those too): it writes them
// in the server's sshd_config (SetEnv) and restarts the server, so a test
// hands the host's programs an environment of its own (PATH, an agent's
// offline settings) as a real host's login would.
func (s *Server) SetEnv(pairs ...string) {
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.ContainsAny(kv, "\"\n") {
			s.t.Fatalf("sshd SetEnv: %q is not NAME=value without quotes or newlines", kv)
		}
		s.env[k] = v
	}
	if err := os.WriteFile(s.cfg, []byte(s.sshd+s.setEnvLine()), 0o600); err != nil {
		s.t.Fatal(err)
	}
	s.Restart()
}

// setEnvLine is the sshd_config's SetEnv line: HOME, TMUX_TMPDIR and what SetEnv added.
func (s *Server) setEnvLine() string {
	env := map[string]string{"HOME": s.Home, "TMUX_TMPDIR": s.Home}
	for k, v := range s.env {
		env[k] = v
	}
	words := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		words = append(words, strconv.Quote(k+"="+env[k]))
	}
	return "SetEnv " + strings.Join(words, " ") + "\n"
}

// Restart stops sshd and starts it again on the same port and keys.
func (s *Server) Restart() {
	s.Stop()
	s.start()
}

// descendants are the processes below pid, read from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	frontier := []int{pid}
	for len(frontier) > 0 {
		next := frontier[0]
		frontier = frontier[1:]
		for child, par := range parent {
			if par == next {
				out = append(out, child)
				frontier = append(frontier, child)
			}
		}
	}
	return out
}

// WaitLog waits until a line of sshd's log contains s, or ctx ends.
func (s *Server) WaitLog(ctx context.Context, sub string) bool {
	for {
		for _, l := range s.Log() {
			if strings.Contains(l, sub) {
				return true
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-s.changed:
		}
	}
}
