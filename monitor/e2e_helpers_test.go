package monitor_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/testbin"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/monitor"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// builtBinary returns the path of the binary, built once for all end-to-end tests.
func builtBinary(t testing.TB) string { return testbin.Path(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// project is a scratch project with its own private tmux server.
type project struct {
	t      testing.TB
	bin    string
	root   string
	socket string
	env    []string
}

func newProject(t testing.TB) *project {
	t.Helper()
	tmuxtest.Require(t)
	p := &project{t: t, bin: builtBinary(t), root: t.TempDir(), socket: tmuxtest.Socket(t)}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "STORY_AUTOMATOR_") || strings.HasPrefix(k, "CLAUDE") || k == "CODEX_THREAD_ID" ||
			k == "TMUX" || k == "TMUX_PANE" || k == "PROJECT_ROOT" {
			continue
		}
		p.env = append(p.env, kv)
	}
	p.env = append(p.env, "PROJECT_ROOT="+p.root, "STORY_AUTOMATOR_TMUX_SOCKET="+p.socket)
	// Runs before the server and the temp dir are cleaned up (cleanups run last-in first-out).
	t.Cleanup(p.shutdown)
	return p
}

func (p *project) stateDir() string { return filepath.Join(p.root, ".story-automator", "sessions") }

func (p *project) command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(p.bin, args...)
	cmd.Env = append(append([]string(nil), p.env...), env...)
	cmd.Dir = p.root
	return cmd
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// run executes the binary and decodes its one JSON object.
func (p *project) run(env []string, args ...string) (map[string]any, int) {
	p.t.Helper()
	out, err := p.command(env, args...).Output()
	var res map[string]any
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		p.t.Fatalf("%v: stdout is not JSON: %q (%v)", args, out, err)
	}
	return res, exitCodeOf(err)
}

// spawnSim starts a sim child acting out the behaviour the env selects.
func (p *project) spawnSim(env []string, extra ...string) string {
	p.t.Helper()
	args := append([]string{"session", "spawn", "--agent", "sim", "--step", "dev", "--story", "1.2"}, extra...)
	res, code := p.run(env, args...)
	name, _ := res["session"].(string)
	if code != 0 || res["ok"] != true || name == "" {
		p.t.Fatalf("spawn: %d %v", code, res)
	}
	return name
}

// monitor runs monitor-session to its end.
func (p *project) monitor(name string, args ...string) (monitor.Result, int) {
	p.t.Helper()
	out, err := p.command(nil, append([]string{"monitor-session", name}, args...)...).Output()
	return decodeResult(p.t, out), exitCodeOf(err)
}

func decodeResult(t testing.TB, out []byte) monitor.Result {
	t.Helper()
	var r monitor.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("monitor output is not JSON: %q", out)
	}
	return r
}

// startMonitor runs monitor-session in the background; wait collects it.
func (p *project) startMonitor(name string, args ...string) func() (monitor.Result, int) {
	p.t.Helper()
	cmd := p.command(nil, append([]string{"monitor-session", name}, args...)...)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	return func() (monitor.Result, int) {
		err := cmd.Wait()
		return decodeResult(p.t, []byte(out.String())), exitCodeOf(err)
	}
}

// runningSim starts a sim child acting out behaviour and waits until its
// agent runs.
func (p *project) runningSim(behaviour string) string {
	p.t.Helper()
	name := p.spawnSim(sim(behaviour))
	p.waitState(name, agentRunning)
	return name
}

// waitState polls the session's state file until cond holds (an external condition).
func (p *project) waitState(name string, cond func(*sessionstate.State) bool) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := sessionstate.Read(p.stateDir(), name)
		if err == nil && cond(st) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("session %s never reached the expected state (last %+v, %v)", name, st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func agentRunning(st *sessionstate.State) bool {
	return st.Lifecycle == sessionstate.LifecycleStarted && st.AgentPid > 0
}

func wantResult(t *testing.T, r monitor.Result, code int, state monitor.FinalState, reason string) {
	t.Helper()
	if r.FinalState != state || r.Reason != reason || code != state.ExitCode() || !r.OK {
		t.Fatalf("got %s/%s exit %d (%+v), want %s/%s exit %d", r.FinalState, r.Reason, code, r, state, reason, state.ExitCode())
	}
}

// shutdown kills the server and waits for the runners to end.
func (p *project) shutdown() { tmuxtest.Shutdown(p.socket, p.stateDir()) }

// newTmux returns a function that kills the project's whole tmux server.
func newTmux(socket string) func() error {
	return func() error { return exec.Command("tmux", "-L", socket, "kill-server").Run() }
}

// stalledSession sets up a session as the spawner leaves it (state file
// "starting", empty output log) whose pane runs something other than the
// runner: the spec is never read and no agent process is ever recorded,
// which is what a runner that never gets going looks like to the monitor.
func (p *project) stalledSession() string {
	p.t.Helper()
	name := child.ProjectPrefix(p.root) + "e1-s1-2-dev-stal"
	out := sessionstate.OutputPath(p.stateDir(), name)
	_, err := sessionstate.Update(p.stateDir(), name, func(st *sessionstate.State) error {
		st.ProjectRoot, st.Agent, st.Lifecycle = p.root, "sim", child.LifecycleStarting
		st.CreatedAt, st.OutputFile = marker.Timestamp(time.Now()), out
		return nil
	})
	if err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(out, nil, 0o600); err != nil {
		p.t.Fatal(err)
	}
	cmd := exec.Command("tmux", "-L", p.socket, "new-session", "-d", "-s", name, "sleep", "600")
	cmd.Env = p.env
	if b, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("tmux new-session: %v %s", err, b)
	}
	return name
}
