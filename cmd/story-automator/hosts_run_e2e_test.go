package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/remotesession"
	"github.com/story-automator/story-automator/workflows/sample"
)

// hostsProject is the sample project with the test's sshd as host "box"
// (story-automator installed there by `hosts install`), committed.
func hostsProject(t *testing.T, srv *sshd.Server, parallel string) *runProject {
	t.Helper()
	p := hostsProjectNotInstalled(t, srv, parallel)
	if res, code := p.run(nil, "hosts", "install", "box", "--json"); code != 0 {
		t.Fatalf("hosts install: exit %d %v", code, res)
	}
	return p
}

// hostsProjectNotInstalled is hostsProject before `hosts install`.
func hostsProjectNotInstalled(t *testing.T, srv *sshd.Server, parallel string) *runProject {
	t.Helper()
	p := newRunProject(t)
	wf := "hosts:\n  - name: box\n    ssh: " + sshd.Alias + "\n    sshCommand: " + srv.SSHCommand() +
		"\n    dir: " + srv.WorkDir + "\n    parallel: " + parallel + "\n    agents: [sim]\n"
	if err := os.MkdirAll(filepath.Join(p.root, ".story-automator"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.root, ".story-automator", "workflow.yaml"), []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "hosts")
	return p
}

// hostLeftovers lists what a run left on the host: story clones, branches
// and refs in the project's repository there, tmux servers of runs.
func hostLeftovers(t *testing.T, srv *sshd.Server) []string {
	t.Helper()
	var left []string
	wts, _ := filepath.Glob(filepath.Join(srv.WorkDir, "worktrees", "*", "*", "*"))
	left = append(left, wts...)
	repos, _ := filepath.Glob(filepath.Join(srv.WorkDir, "repos", "*.git"))
	if len(repos) != 1 {
		t.Fatalf("repositories on the host: %v, want the project's one", repos)
	}
	for _, sub := range []string{"refs/heads/story-automator", "refs/story-automator/base"} {
		refs, _ := filepath.Glob(filepath.Join(repos[0], sub, "*", "*"))
		left = append(left, refs...)
	}
	return left
}

// A run over local and one ssh host at --parallel 3 ends done with one
// commit per story, each holding exactly its own files, stories having run
// on both machines; the host keeps only the project's repository.
func TestE2ERunOverLocalAndAnSSHHost(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	p := hostsProject(t, srv, "2")
	res, code := p.run([]string{"STORY_AUTOMATOR_SIM_DELAY=20ms"}, append([]string{"run", "--agent", "sim", "--parallel", "3", "--json"}, fast...)...)
	if code != 0 {
		t.Fatalf("run exited %d: %v", code, res)
	}
	st := p.state()
	if st.Status != orchestrator.RunDone {
		t.Fatalf("run %s: %s", st.Status, st.PauseReason)
	}
	on := map[string]int{}
	for _, k := range sample.Stories {
		on[st.Unit(k).Host]++
		if n := p.storyCommits()[k]; n != 1 {
			t.Fatalf("story %s has %d commits: %v", k, n, p.storyCommits())
		}
	}
	if on["local"] == 0 || on["box"] == 0 {
		t.Fatalf("stories per host %v, want some on each", on)
	}
	// What an attempt on the host spent is read there, as here.
	for _, u := range st.Units {
		if u.Host != "box" {
			continue
		}
		for _, s := range u.Steps {
			for _, a := range s.Attempts {
				if a.Usage == nil || a.Usage.OutputTokens == 0 || !strings.Contains(a.Detail, "on host box, 4 ssh round trips") && !strings.Contains(a.Detail, "on host box, 6 ssh round trips") {
					t.Errorf("%s %s on box: usage %+v (%s), detail %q", u.Dotted, s.Name, a.Usage, a.UsageNote, a.Detail)
				}
			}
		}
	}
	p.checkCommitContents(st)
	if os.Getenv("SA_DEBUG") != "" {
		for _, l := range st.Log {
			t.Logf("%+v", l)
		}
	}
	status, _ := p.run(nil, "status", "--json")
	units := status["run"].(map[string]any)["units"].([]any)
	hostsSeen := map[string]bool{}
	for _, u := range units {
		hostsSeen[u.(map[string]any)["host"].(string)] = true
	}
	if !hostsSeen["box"] || !hostsSeen["local"] {
		t.Fatalf("status --json units name hosts %v", hostsSeen)
	}
	if left := hostLeftovers(t, srv); len(left) > 0 {
		t.Fatalf("left on the host: %s", strings.Join(left, " "))
	}
	if out := p.git("worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Fatalf("worktrees left here:\n%s", out)
	}
}

// devRunningOnBox reports whether story 1.1's dev step has an attempt
// running in a session on the host box.
func devRunningOnBox(st *orchestrator.State) bool {
	u := st.Unit("1-1")
	if u == nil || u.Host != "box" {
		return false
	}
	s := u.Step(orchestrator.StepDev)
	return s != nil && len(s.Attempts) > 0 && s.Attempts[len(s.Attempts)-1].Session != "" && s.Attempts[len(s.Attempts)-1].FinalState == ""
}

// sshd killed (and every ssh session with it) while a story's child works
// on the host, then started again: the child runs on in the host's tmux,
// the run reconnects and its wait goes on; the step needs no second attempt.
func TestE2ERemoteStepOutlivesADroppedConnection(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	p := hostsProject(t, srv, "1")
	c := p.cmd([]string{"STORY_AUTOMATOR_SIM_DELAY=1500ms"}, append([]string{"run", "--agent", "sim", "--host", "box", "--stories", "1", "--json"}, fast...)...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("1.1's dev step running on box", func(st *orchestrator.State) bool {
		return devRunningOnBox(st)
	})
	// The child's pane comes through the run's own connection to the host.
	dev := p.state().Unit("1-1").Step(orchestrator.StepDev).Attempts
	logins := srv.Accepted()
	cap, code := p.run(nil, "session", "capture", dev[len(dev)-1].Session, "--lines", "50")
	if code != 0 || cap["ok"] != true || cap["session"] != dev[len(dev)-1].Session || cap["source"] != "pane" ||
		!strings.Contains(fmt.Sprint(cap["text"]), "agent-sim bmad: dev 1.1") || srv.Accepted() != logins {
		t.Fatalf("capture of the child on box: exit %d %v (logins %d → %d)", code, cap, logins, srv.Accepted())
	}
	// The dashboard's live view reads it the same way, refresh after
	// refresh over that one connection.
	where, ok := remotesession.Find(p.state(), dev[len(dev)-1].Session)
	pool := &remotesession.Pool{Root: p.root}
	for i := 0; i < 2; i++ {
		text, err := pool.Capture(context.Background(), where, dev[len(dev)-1].Session, 0)
		if !ok || err != nil || !strings.Contains(text, "agent-sim bmad: dev 1.1") || srv.Accepted() != logins {
			t.Fatalf("dashboard's capture %d on box (%v): %v %q (logins %d → %d)", i, ok, err, text, logins, srv.Accepted())
		}
	}
	pool.Close(context.Background())
	srv.Restart()
	if err := c.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	st := p.state()
	if st.Status != orchestrator.RunDone || p.storyCommits()["1-1"] != 1 {
		t.Fatalf("run %s, commits %v", st.Status, p.storyCommits())
	}
	if n := len(st.Unit("1-1").Step(orchestrator.StepDev).Attempts); n != 1 || st.Unit("1-1").Host != "box" {
		t.Fatalf("dev ran %d attempts, on %s; want one, on box: %+v", n, st.Unit("1-1").Host, st.Unit("1-1").Step(orchestrator.StepDev).Attempts)
	}
	if left := hostLeftovers(t, srv); len(left) > 0 {
		t.Fatalf("left on the host: %s", strings.Join(left, " "))
	}
}

// sshd killed for good while a story's child works on the host: past the
// bound the story's step runs again on local, the story lands once, and
// nothing of the lost host's attempt is taken.
func TestE2ERemoteStoryMovesToLocalWhenItsHostIsLost(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	p := hostsProject(t, srv, "1")
	c := p.cmd([]string{"STORY_AUTOMATOR_SIM_DELAY=1500ms", "STORY_AUTOMATOR_HOST_LOST_AFTER=3s"},
		append([]string{"run", "--agent", "sim", "--host", "box", "--stories", "1", "--json"}, fast...)...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("1.1's dev step running on box", func(st *orchestrator.State) bool {
		return devRunningOnBox(st)
	})
	srv.Stop()
	if err := c.Wait(); err != nil {
		t.Fatalf("run: %v", err)
	}
	st := p.state()
	u := st.Unit("1-1")
	if st.Status != orchestrator.RunDone || p.storyCommits()["1-1"] != 1 || u.Host != "local" {
		t.Fatalf("run %s, commits %v, 1.1 on %s", st.Status, p.storyCommits(), u.Host)
	}
	dev := u.Step(orchestrator.StepDev).Attempts
	if len(dev) != 2 || dev[0].FinalState != orchestrator.FinalError || dev[1].FinalState != orchestrator.FinalCompleted {
		t.Fatalf("dev attempts %+v, want the lost one and one completed here", dev)
	}
	moved := false
	for _, l := range st.Log {
		moved = moved || strings.Contains(l.Message, "host box unreachable: the step runs again on local")
	}
	if !moved {
		t.Fatalf("no move in the log: %+v", st.Log)
	}
}

// The sample run's wall time on local alone and on local + one ssh host,
// at --parallel 4 (SA_MEASURE_PARALLEL; the host's parallel too), and the
// ssh round trips of each remote step (set SA_MEASURE_HOSTS=1, optionally
// STORY_AUTOMATOR_SIM_DELAY; not a check).
func TestMeasureSampleRunOverHosts(t *testing.T) {
	if os.Getenv("SA_MEASURE_HOSTS") == "" {
		t.Skip("a measurement: SA_MEASURE_HOSTS=1")
	}
	srv := sshd.Start(t)
	delay := "STORY_AUTOMATOR_SIM_DELAY=" + os.Getenv("STORY_AUTOMATOR_SIM_DELAY")
	parallel := os.Getenv("SA_MEASURE_PARALLEL")
	if parallel == "" {
		parallel = "4"
	}
	for _, hostsArg := range [][]string{{"--host", "local"}, nil} {
		p := hostsProject(t, srv, parallel)
		start := time.Now()
		res, code := p.run([]string{delay}, append(append([]string{"run", "--agent", "sim", "--parallel", parallel, "--json"}, hostsArg...), fast...)...)
		wall := time.Since(start)
		if code != 0 {
			t.Fatalf("run exited %d: %v", code, res)
		}
		st := p.state()
		var notes []string
		for _, u := range st.Units {
			for _, s := range u.Steps {
				for _, a := range s.Attempts {
					if strings.Contains(a.Detail, "round trips") {
						notes = append(notes, u.Dotted+"/"+s.Name+": "+a.Detail)
					}
				}
			}
		}
		t.Logf("hosts %v: wall %s\n%s", hostsArg, wall.Round(10*time.Millisecond), strings.Join(notes, "\n"))
	}
}

// The orchestrator SIGKILLed while a story's child works on the host:
// `run --resume` finds that child still there and waits for it (no second
// child), and ends done with one commit; nothing is left on the host but
// the project's repository, and no tmux session of the run.
func TestE2ERemoteRunKilledThenResumed(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	p := hostsProject(t, srv, "1")
	env := []string{"STORY_AUTOMATOR_SIM_DELAY=1500ms"}
	c := p.cmd(env, append([]string{"run", "--agent", "sim", "--host", "box", "--stories", "1", "--json"}, fast...)...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("1.1's dev step running on box", func(st *orchestrator.State) bool {
		return devRunningOnBox(st)
	})
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	res, code := p.run(env, "run", "--resume", "--json")
	if code != 0 {
		t.Fatalf("resume exited %d: %v", code, res)
	}
	st := p.state()
	if st.Status != orchestrator.RunDone || p.storyCommits()["1-1"] != 1 || st.Unit("1-1").Host != "box" {
		t.Fatalf("run %s, commits %v, on %s", st.Status, p.storyCommits(), st.Unit("1-1").Host)
	}
	dev := st.Unit("1-1").Step(orchestrator.StepDev).Attempts
	if len(dev) != 2 || dev[0].FinalState != orchestrator.FinalInterrupted || dev[1].FinalState != orchestrator.FinalCompleted ||
		dev[1].Session != dev[0].Session {
		t.Fatalf("dev attempts %+v, want the abandoned one and the wait for its same child", dev)
	}
	if left := hostLeftovers(t, srv); len(left) > 0 {
		t.Fatalf("left on the host: %s", strings.Join(left, " "))
	}
	ls := exec.Command("tmux", "-L", "sa-"+strings.TrimPrefix(st.RunID, "run-"), "list-sessions")
	ls.Env = cleanEnv("TMUX_TMPDIR=" + srv.Home)
	if out, err := ls.CombinedOutput(); err == nil {
		t.Fatalf("sessions left in the run's tmux on the host:\n%s", out)
	}
}

// A run whose host has no story-automator, or another version, is refused
// before any agent starts, here or there, with the command that installs
// it: no story runs locally first, no state document is written and the
// host is left as it was.
func TestE2ERunRefusesAHostWithoutThisStoryAutomatorBeforeAnyAgentStarts(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	p := hostsProjectNotInstalled(t, srv, "1")
	head := p.git("rev-parse", "HEAD")
	check := func(what, code, reason string) {
		t.Helper()
		res, exit := p.run(nil, append([]string{"run", "--agent", "sim", "--parallel", "2", "--json"}, fast...)...)
		if exit == 0 || res["error"] != code || res["action"] != "story-automator hosts install box" ||
			!strings.Contains(fmt.Sprint(res["message"]), reason) {
			t.Fatalf("%s: exit %d %v", what, exit, res)
		}
		if runs, _ := filepath.Glob(filepath.Join(p.root, ".story-automator", "runs", "*.md")); len(runs) != 0 {
			t.Fatalf("%s: a refused run was recorded: %v", what, runs)
		}
		if sessions, _ := filepath.Glob(filepath.Join(p.root, ".story-automator", "sessions", "*")); len(sessions) != 0 {
			t.Fatalf("%s: a refused run started children: %v", what, sessions)
		}
		if got := p.git("rev-parse", "HEAD"); got != head {
			t.Fatalf("%s: a refused run committed: HEAD %s, was %s", what, got, head)
		}
		if left, _ := filepath.Glob(filepath.Join(srv.WorkDir, "repos", "*")); len(left) != 0 {
			t.Fatalf("%s: a refused run made %v on the host", what, left)
		}
	}
	check("not installed", "host_not_installed", "has no story-automator")
	fake := "#!/bin/sh\necho 'story-automator v0.0.1-elsewhere go1.20'\n"
	if err := os.MkdirAll(filepath.Join(srv.WorkDir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.WorkDir, "bin", "story-automator"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	check("another version", "host_version_mismatch", "v0.0.1-elsewhere")
}

// A run whose agent no enabled host lists (this machine's agents: too) is
// refused before it plans, with the code and what to change; no host is
// reached and no run is recorded.
func TestE2ERunRefusesAnAgentNoHostRuns(t *testing.T) {
	t.Parallel()
	p := newRunProject(t)
	wf := "hosts:\n  - name: local\n    agents: [sim]\n  - name: box\n    ssh: nowhere.invalid\n    dir: /srv/sa\n    agents: [codex]\n"
	if err := os.MkdirAll(filepath.Join(p.root, ".story-automator"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.root, ".story-automator", "workflow.yaml"), []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	res, code := p.run(nil, append([]string{"run", "--agent", "claude", "--stories", "1", "--json"}, fast...)...)
	if code == 0 || res["error"] != "no_host_for_agent" || !strings.Contains(fmt.Sprint(res["message"]), "local: sim; box: codex") ||
		!strings.Contains(fmt.Sprint(res["action"]), "add claude to a host's agents") {
		t.Fatalf("exit %d %v", code, res)
	}
	if runs, _ := filepath.Glob(filepath.Join(p.root, ".story-automator", "runs", "*.md")); len(runs) != 0 {
		t.Fatalf("a refused run was recorded: %v", runs)
	}
}

// A child left hanging on a host the run declared lost is ended once the
// host answers again, though its story never lands (the step fails on
// every attempt here, so no clone is dropped): the host's tmux server of
// the run is gone when the run ends.
func TestE2EALostHostsChildIsEndedWhenTheHostAnswersAgain(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	realagent.StopStrays(t, srv.Home) // should the hanging child outlive the test
	p := hostsProject(t, srv, "1")
	c := p.cmd([]string{"STORY_AUTOMATOR_SIM_FAULTS=hang:dev:1,crash:dev", "STORY_AUTOMATOR_HOST_LOST_AFTER=3s"},
		append([]string{"run", "--agent", "sim", "--host", "box", "--stories", "1", "--json"}, fast...)...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p.waitFor("1.1's dev step running on box", func(st *orchestrator.State) bool {
		return devRunningOnBox(st)
	})
	run := p.state().RunID
	srv.Stop()
	p.waitFor("box declared lost", func(st *orchestrator.State) bool {
		for _, l := range st.Log {
			if strings.Contains(l.Message, "host box unreachable") {
				return true
			}
		}
		return false
	})
	srv.Restart()
	_ = c.Wait() // the step fails on local too: the run escalates
	if st := p.state(); st.Unit("1-1").Host != "local" || st.Status == orchestrator.RunDone {
		t.Fatalf("run %s, 1.1 on %s: want it moved to local and not done", st.Status, st.Unit("1-1").Host)
	}
	ls := exec.Command("tmux", "-L", "sa-"+strings.TrimPrefix(run, "run-"), "list-sessions")
	ls.Env = append(os.Environ(), "TMUX_TMPDIR="+srv.Home, "TMUX=")
	if out, err := ls.CombinedOutput(); err == nil {
		t.Fatalf("the lost attempt's child still runs on box: %s", out)
	}
}
