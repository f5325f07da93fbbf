package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// screens is a private tmux server whose sessions play the user's terminals.
type screens struct {
	t      *testing.T
	socket string
}

func (s screens) tmux(args ...string) string {
	s.t.Helper()
	c := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...)
	c.Env = cleanEnv()
	out, err := c.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// open starts a 100×30 terminal named name running sh's script in dir.
func (s screens) open(name, dir, script string) {
	s.tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30", "-c", dir, "sh", "-c", script)
}

func (s screens) screen(name string) string { return s.tmux("capture-pane", "-p", "-t", "="+name+":") }

// waitScreen polls a terminal (something outside this process) until its
// screen satisfies ok.
func (s screens) waitScreen(name, what string, ok func(string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		got := s.screen(name)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; %s shows:\n%s", what, name, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func contains(sub string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, sub) }
}

// envScript is a shell line setting env and running argv.
func envScript(env []string, argv ...string) string {
	var b strings.Builder
	b.WriteString("env")
	for _, kv := range append(env, argv...) {
		b.WriteString(" " + shellword.MustQuote(kv))
	}
	return b.String()
}

// The dashboard follows a real run from another terminal: its grid moves
// with the run, the live view shows the working child's screen, attach
// leaves the dashboard and detaching comes back to it, pause then resume
// finish the run done, and q exits 0 leaving the terminal as it was.
func TestE2EDashboardFollowsAndDrivesARun(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	ui := screens{t: t, socket: tmuxtest.Socket(t)}
	bin := builtBinary(t)
	simEnv := []string{"STORY_AUTOMATOR_SIM_DELAY=8s", "STORY_AUTOMATOR_SIM_LOG=" + p.simLog, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TERM=xterm-256color"}
	ui.open("run", p.root, envScript(append(simEnv, "STORY_AUTOMATOR_TMUX_SOCKET="+p.socket), bin, "run", "--agent", "sim", "--stories", "1.1")+"; echo RUN-EXIT=$?; sleep 600")
	// The dashboard is given no socket: it finds the run's recorded one.
	ui.open("dash", p.root, "echo BEFORE-DASHBOARD; "+envScript(append(simEnv, "PAGER=cat", "TMUX="), bin, "dash")+"; echo DASH-EXIT=$?; sleep 600")

	// The grid follows the run.
	ui.waitScreen("dash", "the running run", contains("● running"))
	ui.waitScreen("dash", "1.1's create step running", regexp.MustCompile(`1\.1 .*▶`).MatchString)

	// The live view shows the child's own screen.
	ui.tmux("send-keys", "-t", "=dash:", "2")
	ui.waitScreen("dash", "the child's screen in the live view", contains("agent-sim bmad: create 1.1"))

	// Attach leaves the dashboard for the child; detaching comes back.
	ui.tmux("send-keys", "-t", "=dash:", "a")
	child := waitClient(t, p.socket)
	ui.waitScreen("dash", "the child's session attached", func(s string) bool { return !strings.Contains(s, " 1 Run ") })
	detach := exec.Command("tmux", "-L", p.socket, "detach-client", "-s", child)
	detach.Env = cleanEnv()
	if out, err := detach.CombinedOutput(); err != nil {
		t.Fatalf("detach: %v %s", err, out)
	}
	ui.waitScreen("dash", "the dashboard back after the detach", contains("back from "+strings.TrimPrefix(child, "=")))

	// Pause: the run stops after its current step; resume finishes it.
	ui.tmux("send-keys", "-t", "=dash:", "1", "p")
	ui.waitScreen("run", "the run paused by hand", contains("RUN-EXIT="))
	p.waitFor("the run paused", func(st *orchestrator.State) bool { return st.Status == orchestrator.RunPaused })
	ui.waitScreen("dash", "the paused run", contains("● paused"))
	ui.tmux("send-keys", "-t", "=dash:", "r")
	ui.waitScreen("dash", "the resumed run at work on a step", contains("working: 1.1"))
	if cpu, ok := idleCPU(t, ui, 5*time.Second); ok {
		t.Logf("dashboard CPU while the run waits on a step: %.2f %% of a core", cpu)
	}
	p.waitFor("the resumed run done", func(st *orchestrator.State) bool { return st.Status == orchestrator.RunDone })
	ui.waitScreen("dash", "the finished run", contains("● done"))
	st := p.state()
	if log := readFile(t, strings.TrimSuffix(st.Config.StateFile, ".md")+".log"); !strings.Contains(log, "1.1") {
		t.Fatalf("the resumed run's log says nothing of its story:\n%s", log)
	}

	// q quits with 0 and leaves the terminal as it was.
	ui.tmux("send-keys", "-t", "=dash:", "q")
	got := ui.waitScreen("dash", "the dashboard's exit", contains("DASH-EXIT="))
	if !strings.Contains(got, "DASH-EXIT=0") || !strings.Contains(got, "BEFORE-DASHBOARD") {
		t.Fatalf("the dashboard must exit 0 and give back the screen as it was:\n%s", got)
	}
	if alt := strings.TrimSpace(ui.tmux("display-message", "-p", "-t", "=dash:", "#{alternate_on}")); alt != "0" {
		t.Fatalf("the alternate screen is still on (%s)", alt)
	}
}

// waitClient waits for a client attached to one of the run's sessions and
// returns that session's target.
func waitClient(t *testing.T, socket string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c := exec.Command("tmux", "-L", socket, "list-clients", "-F", "#{client_session}")
		c.Env = cleanEnv()
		if out, err := c.Output(); err == nil && strings.TrimSpace(string(out)) != "" {
			return "=" + strings.Fields(string(out))[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no client attached to the run's sessions")
	return ""
}

// idleCPU is the dashboard process's CPU over window, in % of a core
// (measured for the report, never asserted; not where there is no /proc).
func idleCPU(t *testing.T, ui screens, window time.Duration) (float64, bool) {
	t.Helper()
	shell := strings.TrimSpace(ui.tmux("display-message", "-p", "-t", "=dash:", "#{pane_pid}"))
	kids, err := os.ReadFile(filepath.Join("/proc", shell, "task", shell, "children"))
	if err != nil || len(strings.Fields(string(kids))) == 0 {
		t.Logf("the dashboard's CPU is not measured here: %v", err)
		return 0, false
	}
	pid := strings.Fields(string(kids))[0]
	before, start := cpuTicks(t, pid), time.Now()
	time.Sleep(window) // a measurement window, not a synchronisation
	used := cpuTicks(t, pid) - before
	return 100 * float64(used) / 100 / time.Since(start).Seconds(), true // USER_HZ is 100
}

// cpuTicks is a process's user and system time in clock ticks (/proc/PID/stat).
func cpuTicks(t *testing.T, pid string) int64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	user, _ := strconv.ParseInt(f[11], 10, 64)
	sys, _ := strconv.ParseInt(f[12], 10, 64)
	return user + sys
}
