package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/creack/pty"

	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/orchestrator"
)

// screenWatch collects what a terminal shows and closes seen once it has
// shown want.
type screenWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (s *screenWatch) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	had := strings.Contains(s.buf.String(), s.want)
	s.buf.Write(p)
	if !had && strings.Contains(s.buf.String(), s.want) {
		close(s.seen)
	}
	return len(p), nil
}

func (s *screenWatch) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// `session attach` of a child working on an ssh host attaches there (the
// host's own attach, with a terminal, over ssh): the user sees the child's
// screen and detaches back; `stop` then ends the run, the remote child too.
func TestE2EAttachToAChildOnAnSSHHostAndStopTheRun(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	srv.SetEnv("STORY_AUTOMATOR_SIM_FAULTS=hang:dev:1@1-1")
	p := hostsProject(t, srv, "1")
	c := p.cmd(nil, append([]string{"run", "--agent", "sim", "--host", "box", "--stories", "1", "--json"}, fast...)...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	p.waitFor("1.1's dev step running on box", devRunningOnBox)
	dev := p.state().Unit("1-1").Step(orchestrator.StepDev).Attempts
	name := dev[len(dev)-1].Session

	attach := p.cmd(nil, "session", "attach", name)
	tty, err := pty.StartWithSize(attach, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	screen := &screenWatch{want: "injected hang", seen: make(chan struct{})}
	go func() { _, _ = io.Copy(screen, tty) }()
	attached := make(chan error, 1)
	go func() { attached <- attach.Wait() }()
	select {
	case <-screen.seen:
	case err := <-attached:
		t.Fatalf("session attach ended (%v) before it showed the child:\n%s", err, screen)
	case err := <-done:
		t.Fatalf("the run ended (%v) before the attached screen showed the child:\n%s", err, screen)
	}
	// tmux's prefix, then d: detach, back to this terminal.
	if _, err := tty.Write([]byte("\x02d")); err != nil {
		t.Fatal(err)
	}
	if err := <-attached; err != nil {
		t.Fatalf("session attach on box: %v\n%s", err, screen)
	}

	res, code := p.run(nil, "stop", "--json")
	if code != 0 || res["stopped"] != true {
		t.Fatalf("stop: exit %d %v", code, res)
	}
	if err := <-done; err == nil {
		t.Fatal("the stopped run exited 0; want it paused (run_interrupted)")
	}
	if a := p.state().Unit("1-1").Step(orchestrator.StepDev).Attempts; a[len(a)-1].FinalState != orchestrator.FinalInterrupted {
		t.Fatalf("dev after stop: %+v", a[len(a)-1])
	}
	// The host's pane is gone: its screen is read from the child's output file.
	if cap, code := p.run(nil, "session", "capture", name); code != 0 || cap["source"] != "outputFile" {
		t.Fatalf("the child still has a pane on box after stop: exit %d %v", code, cap)
	}
	if res, code := p.run(nil, append([]string{"run", "--resume", "--json"}, fast...)...); code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume exited %d: %v", code, res)
	}
}
