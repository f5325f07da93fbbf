package child

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/story-automator/story-automator/sessionstate"
)

// paneHarness stands in for a tmux pane: a pty whose far side is drained.
type paneHarness struct {
	tty    *os.File
	ptmx   *os.File
	mu     sync.Mutex
	screen bytes.Buffer
}

func newPane(t *testing.T) *paneHarness {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	h := &paneHarness{tty: tty, ptmx: ptmx}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			h.mu.Lock()
			h.screen.Write(buf[:n])
			h.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close(); ptmx.Close() })
	return h
}

func (h *paneHarness) text() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.screen.String()
}

type runFixture struct {
	dir, name string
	pane      *paneHarness
	stop      chan os.Signal
}

func newRunFixture(t *testing.T, spec Spec) *runFixture {
	t.Helper()
	dir := t.TempDir()
	f := &runFixture{dir: dir, name: "sa-test-run", pane: newPane(t), stop: make(chan os.Signal, 1)}
	spec.Name = f.name
	spec.OutputFile = sessionstate.OutputPath(dir, f.name)
	if spec.Env == nil {
		spec.Env = []string{"PATH=" + os.Getenv("PATH")}
	}
	if spec.Dir == "" {
		spec.Dir = dir
	}
	if err := WriteSpec(dir, spec); err != nil {
		t.Fatal(err)
	}
	return f
}

// run runs the session and returns the runner's own exit code: 0 once it has
// recorded how the agent ended, 127 if the agent never started, 1 if killed.
func (f *runFixture) run() int {
	r := &Runner{StateDir: f.dir, Name: f.name, Pane: f.pane.tty, Screen: f.pane.tty, Term: "xterm",
		Stop: f.stop, Resize: make(chan os.Signal), Now: time.Now, KillGrace: 200 * time.Millisecond}
	return r.Run()
}

func (f *runFixture) state(t *testing.T) *sessionstate.State {
	t.Helper()
	st, err := sessionstate.Read(f.dir, f.name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (f *runFixture) output(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(sessionstate.OutputPath(f.dir, f.name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRunnerRecordsExitCodeAndTeesOutputFromTheFirstByte(t *testing.T) {
	f := newRunFixture(t, Spec{Argv: []string{"/bin/sh", "-c", `printf 'X'; echo " term=$TERM"; exit 3`}})
	if code := f.run(); code != 0 {
		t.Fatalf("the runner exited %d", code)
	}
	st := f.state(t)
	if st.Lifecycle != sessionstate.LifecycleExited || st.ExitCode == nil || *st.ExitCode != 3 || st.Signal != "" {
		t.Fatalf("state %+v", st)
	}
	if st.PanePid != os.Getpid() || st.AgentPid <= 0 || st.StartedAt == "" || st.ExitedAt == "" {
		t.Fatalf("pids/times %+v", st)
	}
	if out := f.output(t); !strings.HasPrefix(out, "X term=xterm") {
		t.Fatalf("output %q", out)
	}
	if _, err := os.Stat(SpecPath(f.dir, f.name)); !os.IsNotExist(err) {
		t.Fatal("spec not removed")
	}
}

func TestRunnerRecordsDeathBySignal(t *testing.T) {
	f := newRunFixture(t, Spec{Argv: []string{"/bin/sh", "-c", `kill -KILL $$`}})
	if code := f.run(); code != 0 {
		t.Fatalf("the runner exited %d", code)
	}
	st := f.state(t)
	if st.Lifecycle != sessionstate.LifecycleExited || st.ExitCode != nil || st.Signal != "SIGKILL" {
		t.Fatalf("state %+v", st)
	}
}

func TestRunnerGivesThePromptOnStdinByteExact(t *testing.T) {
	prompt := strings.Repeat("ünï \"q\" $(x) `y`;\n", 6000) + "no newline at the end"
	out := filepath.Join(t.TempDir(), "got")
	f := newRunFixture(t, Spec{Argv: []string{"/bin/sh", "-c", `cat > "$0"`, out}, Stdin: prompt, UseStdin: true})
	if code := f.run(); code != 0 {
		t.Fatalf("the runner exited %d", code)
	}
	got, err := os.ReadFile(out)
	if err != nil || string(got) != prompt {
		t.Fatalf("stdin prompt differs (%d vs %d bytes): %v", len(got), len(prompt), err)
	}
}

func TestRunnerReportsACommandThatCannotStart(t *testing.T) {
	f := newRunFixture(t, Spec{Argv: []string{"no-such-agent-binary"}})
	if code := f.run(); code != 127 {
		t.Fatalf("the runner exited %d", code)
	}
	st := f.state(t)
	if st.ExitCode == nil || *st.ExitCode != 127 {
		t.Fatalf("state %+v", st)
	}
	if out := f.output(t); !strings.Contains(out, "no-such-agent-binary") {
		t.Fatalf("output %q", out)
	}
}

func TestRunnerHungUpMarksTheSessionKilledNotExited(t *testing.T) {
	f := newRunFixture(t, Spec{Argv: []string{"/bin/sh", "-c", `echo started; exec sleep 30`}})
	done, code := make(chan struct{}), -1
	go func() { code = f.run(); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(f.pane.text(), "started") {
		if time.Now().After(deadline) {
			t.Fatal("agent never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.stop <- os.Interrupt
	select {
	case <-done:
		if code != 1 {
			t.Fatalf("the runner exited %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runner did not end after a hangup")
	}
	st := f.state(t)
	if st.Lifecycle != LifecycleKilled || st.ExitCode != nil {
		t.Fatalf("state %+v", st)
	}
}

func TestRunnerForwardsPaneInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "typed")
	f := newRunFixture(t, Spec{Argv: []string{"/bin/sh", "-c", `echo ready; read line; printf '%s' "$line" > "$0"`, out}})
	done, code := make(chan struct{}), -1
	go func() { code = f.run(); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(f.pane.text(), "ready") {
		if time.Now().After(deadline) {
			t.Fatal("agent never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Keys typed into the pane arrive on its terminal: write them on the far side.
	if _, err := f.pane.ptmx.Write([]byte("hello typed\r")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		if code != 0 {
			t.Fatalf("the runner exited %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agent never read the typed line")
	}
	got, _ := os.ReadFile(out)
	if string(got) != "hello typed" {
		t.Fatalf("typed %q", got)
	}
}
