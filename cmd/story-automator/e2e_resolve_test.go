package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/resolve"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/workflows"
)

const resolveSpec = "_bmad-output/implementation-artifacts/spec-1-1-sign-up.md"

// blockedRun runs the backlog with the worker blocking (steer) until the
// run stops at story 1.1, which is left escalated or parked.
func blockedRun(t *testing.T, p *runProject, uv, steer string, args ...string) {
	t.Helper()
	res, code := p.run([]string{uv, agentsim.EnvBuildAuto + "=" + steer}, append([]string{"run", "--agent", "sim", "--json"}, args...)...)
	if u := p.state().Unit("1-1"); code == 0 || !resolve.Blocked(u) {
		t.Fatalf("exit %d %v, 1.1 %+v\n%s", code, res, u, p.stateLog())
	}
}

func (p *runProject) specStatus() string {
	p.t.Helper()
	s, err := workflows.ReadSpec(filepath.Join(p.root, resolveSpec))
	if err != nil {
		p.t.Fatal(err)
	}
	return s.Status
}

// One story blocks (sim's fault switch); `resolve --no-interactive` sets
// its spec back to draft (it was never implemented) and the story pending,
// and `run --resume` takes the whole backlog to done.
func TestE2EResolveNoInteractiveThenResumeToDone(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	blockedRun(t, p, withUV(in), "blocked=implementation verification failed@1-1")
	// Parked: its work, the spec among it, is on its ref, not in the tree;
	// resolve brings it back first.
	st := p.state()
	if u := st.Unit("1-1"); u.Status != orchestrator.StatusParked || u.Parked == nil || u.Parked.Ref == "" {
		t.Fatalf("1.1 %+v", u)
	}
	if _, err := os.Stat(filepath.Join(p.root, resolveSpec)); !os.IsNotExist(err) {
		t.Fatalf("the parked spec is in the tree: %v", err)
	}
	if text := p.git("show", st.Unit("1-1").Parked.Ref+":"+resolveSpec); !strings.Contains(text, "status: 'blocked'") && !strings.Contains(text, "status: blocked") {
		t.Fatalf("the spec on the ref:\n%s", text)
	}
	res, code := p.run(nil, "resolve", "1.1", "--no-interactive", "--message", "fixed the verification by hand")
	if code != 0 || res["specFrom"] != "blocked" || res["specTo"] != "draft" || res["spec"] != resolveSpec || res["next"] != orchestrator.ResumeCommand {
		t.Fatalf("resolve: exit %d %v", code, res)
	}
	st = p.state()
	u := st.Unit("1-1")
	dev := u.Step(orchestrator.StepDev)
	if u.Status != orchestrator.StatusPending || dev.Status != orchestrator.StatusPending || p.specStatus() != workflows.SpecDraft ||
		!strings.Contains(p.stateLog(), "fixed the verification by hand") {
		t.Fatalf("re-armed: unit %s, dev %+v, spec %s", u.Status, dev, p.specStatus())
	}
	res, code = p.run([]string{withUV(in)}, "run", "--resume", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume: exit %d %v\n%s", code, res, p.stateLog())
	}
	p.checkLanded(in, "1-1", "1-2", "2-1")
}

// An intent gap at review: the worker saved its attempted change as a
// patch and reverted it; `resolve --restore-patch --resume` applies the
// patch, sets the spec in-review and resumes: the review lands the story
// with the patch's code, and the worker did not implement it again.
func TestE2EResolveRestorePatchResumesTheReview(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	blockedRun(t, p, withUV(in), "intentgap", "--stories", "1.1")
	code := filepath.Join(p.root, agentsim.SimWorkDir, "1-1-sign-up.txt")
	if _, err := os.Stat(code); !os.IsNotExist(err) {
		t.Fatalf("the worker did not revert its change: %v", err)
	}
	if pk := p.state().Unit("1-1").Parked; pk == nil || !strings.Contains(pk.Reason, "intent gap") {
		t.Fatalf("parked %+v", pk)
	}
	out, err := p.cmd([]string{withUV(in)}, "resolve", "1.1", "--restore-patch", "--resume", "--json").CombinedOutput()
	first := strings.SplitN(string(out), "\n", 2)[0]
	if err != nil || !strings.Contains(first, `"patch":"_bmad-output/implementation-artifacts/intent-gap-1-1-sign-up.patch"`) ||
		!strings.Contains(first, `"specTo":"in-review"`) {
		t.Fatalf("resolve --restore-patch --resume: %v\n%s\n%s", err, out, p.stateLog())
	}
	if res := lastJSON(t, string(out), ""); res["outcome"] != "done" {
		t.Fatalf("the resumed run: %v\n%s", res, p.stateLog())
	}
	p.checkLanded(in, "1-1")
	if text := p.git("show", "HEAD:"+agentsim.SimWorkDir+"/1-1-sign-up.txt"); text != "code of 1-1-sign-up\n" {
		t.Fatalf("the landed code: %q", text)
	}
	dev := p.state().Unit("1-1").Step(orchestrator.StepDev)
	if len(dev.Attempts) != 2 || !strings.Contains(p.stateLog(), "intent-gap patch") {
		t.Fatalf("dev attempts %+v\n%s", dev.Attempts, p.stateLog())
	}
}

// An interactive resolve: the run's agent in a session attached to the
// terminal. Its session killed mid-way, or resolve itself left (SIGTERM),
// leaves the story escalated, its spec blocked and no session behind; one
// whose agent ends normally re-arms the story.
func TestE2EResolveSessionKilledLeavesTheStoryEscalated(t *testing.T) {
	t.Parallel()
	p, in := buildAutoProject(t, "")
	blockedRun(t, p, withUV(in), "blocked=implementation verification failed", "--stories", "1.1")
	state := readFile(t, p.stateFileOf())

	c, screen := p.resolveOnATerminal(t, agent.EnvSimBehaviour+"=hang")
	name := p.resolveSession(t)
	if _, code := p.run(nil, "session", "kill", name); code != 0 {
		t.Fatalf("session kill %s: exit %d", name, code)
	}
	if err := <-c; err == nil || !strings.Contains(screen.String(), resolve.CodeSessionEnded) {
		t.Fatalf("resolve after its session was killed: %v\n%s", err, screen)
	}
	if now := readFile(t, p.stateFileOf()); now != state {
		t.Fatalf("the killed resolve changed the state document:\n%s", now)
	}
	if u := p.state().Unit("1-1"); !resolve.Blocked(u) || p.specStatus() != workflows.SpecBlocked {
		t.Fatalf("after the kill: 1.1 %s, spec %s", u.Status, p.specStatus())
	}

	// Left (SIGTERM, as Ctrl-C would): the session is ended with it, nothing re-armed.
	c, screen, proc := p.resolveOnATerminalWith(t, "agent-sim", agent.EnvSimBehaviour+"=hang")
	if err := proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-c; err == nil || !strings.Contains(screen.String(), resolve.CodeSessionEnded) {
		t.Fatalf("resolve left by SIGTERM: %v\n%s", err, screen)
	}
	if panes, err := tmux.New(p.socket).ListPanes(context.Background()); err != nil || len(panes) != 0 {
		t.Fatalf("a left resolve kept its session: %v %v", panes, err)
	}
	if now := readFile(t, p.stateFileOf()); now != state {
		t.Fatalf("the left resolve changed the state document:\n%s", now)
	}

	c, screen = p.resolveOnATerminal(t, agent.EnvSimBehaviour+"=finish")
	if err := <-c; err != nil {
		t.Fatalf("resolve whose agent ended normally: %v\n%s", err, screen)
	}
	if u := p.state().Unit("1-1"); u.Status != orchestrator.StatusPending || p.specStatus() != workflows.SpecDraft {
		t.Fatalf("after a normal end: 1.1 %s, spec %s\n%s", u.Status, p.specStatus(), screen)
	}
}

func (p *runProject) stateFileOf() string {
	return orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root)
}

// resolveOnATerminal starts `resolve 1.1` with a terminal of its own and
// waits until the terminal shows the session's agent.
func (p *runProject) resolveOnATerminal(t *testing.T, env ...string) (<-chan error, *screenWatch) {
	t.Helper()
	done, screen, _ := p.resolveOnATerminalWith(t, "agent-sim", env...)
	return done, screen
}

// resolveOnATerminalWith is resolveOnATerminal waiting for the terminal to show want.
func (p *runProject) resolveOnATerminalWith(t *testing.T, want string, env ...string) (<-chan error, *screenWatch, *os.Process) {
	t.Helper()
	c := p.cmd(append(env, "TERM=xterm-256color"), "resolve", "1.1")
	tty, err := pty.StartWithSize(c, &pty.Winsize{Rows: 30, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	screen := &screenWatch{want: want, seen: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(screen, tty)
	}()
	done := make(chan error, 1)
	go func() {
		err := c.Wait()
		// What resolve printed last may still be in the terminal's buffer
		// when it has exited: read to the terminal's end (its last writer
		// gone) before the caller looks at the screen. A grandchild that
		// keeps the terminal open must not hang the test: a bound.
		select {
		case <-copied:
		case <-time.After(30 * time.Second):
		}
		done <- err
	}()
	select {
	case <-screen.seen:
	case err := <-done:
		done <- err // the caller reads how it ended
	}
	return done, screen, c.Process
}

// resolveSession is the resolve session running on the project's server.
func (p *runProject) resolveSession(t *testing.T) string {
	t.Helper()
	panes, err := tmux.New(p.socket).ListPanes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, pn := range panes {
		if strings.Contains(pn.Session, resolve.StepResolve) {
			return pn.Session
		}
	}
	t.Fatalf("no resolve session among %v", panes)
	return ""
}

// Bad input: no STORY is a usage error; a project without a run, or a
// story that is not blocked, is refused with its code and what to do.
func TestE2EResolveRefusesWithTheAction(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	if res, code := p.run(nil, "resolve"); code != 2 || res["error"] != "usage_error" {
		t.Fatalf("no STORY: exit %d %v", code, res)
	}
	if res, code := p.run(nil, "resolve", "1.1", "--no-interactive"); code != 1 || res["error"] != resolve.CodeNoRun ||
		!strings.Contains(res["action"].(string), "story-automator run") {
		t.Fatalf("no run: exit %d %v", code, res)
	}
	if res, code := p.run(nil, "run", "--agent", "sim", "--stories", "1", "--json"); code != 0 || res["outcome"] != "done" {
		t.Fatalf("run: exit %d %v", code, res)
	}
	if res, code := p.run(nil, "resolve", "1.1", "--no-interactive"); code != 1 || res["error"] != resolve.CodeNotBlocked {
		t.Fatalf("a done story: exit %d %v", code, res)
	}
}
