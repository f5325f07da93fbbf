package main

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/orchestrator"
)

// runningOnHost names the step of story whose attempt is still running
// (not final) on host in st, "" when none is.
func runningOnHost(st *orchestrator.State, story, host string) string {
	u := st.Unit(story)
	if u == nil || u.Host != host {
		return ""
	}
	for _, s := range u.Steps {
		if n := len(s.Attempts); n > 0 && s.Attempts[n-1].Session != "" && s.Attempts[n-1].FinalState == "" {
			return s.Name
		}
	}
	return ""
}

// killAtTrap starts run (in a process group of its own) and SIGKILLs its
// group once git reached gitTrap's trap (started), then the trapped git.
func killAtTrap(t *testing.T, run *exec.Cmd, started, match string) {
	t.Helper()
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- run.Wait() }()
	reached := make(chan []byte, 1)
	go func() {
		var pid []byte
		if f, err := os.Open(started); err == nil { // returns once the trap opened it for writing
			pid, _ = io.ReadAll(f)
			f.Close()
		}
		reached <- pid
	}()
	var trapped []byte
	select {
	case trapped = <-reached:
	case err := <-ended:
		if f, ferr := os.OpenFile(started, os.O_RDWR, 0); ferr == nil {
			f.Close()
		}
		t.Fatalf("the run ended (%v) without running git %s", err, match)
	}
	if err := syscall.Kill(-run.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-ended; err == nil {
		t.Fatal("the run was not ended by the kill")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(trapped)))
	if err != nil {
		t.Fatalf("the trap said %q, not its pid", trapped)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the trapped git %d: %v", pid, err)
	}
}

// The orchestrator SIGKILLed (its whole process group) while a story that
// ran on the host comes back: right after its work is fetched from the
// host, before the story's worktree here holds it; or right after the
// user's branch fast-forwarded to the story's commit, before the run
// recorded it or dropped the clone on the host. `run --resume` ends done
// with one commit for the story, a clean tree, and nothing left here or on
// the host.
func TestE2ERemoteRunKilledWhileAStoryLandsResumesClean(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, match string }{
		{"after the fetch-back", "fetch -q --no-tags"},
		{"after the fast-forward", "merge --ff-only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := sshd.Start(t)
			p := hostsProject(t, srv, "1")
			path, started := gitTrap(t, c.match, true)
			run := p.cmd([]string{"PATH=" + path}, append([]string{"run", "--agent", "sim", "--host", "box", "--stories", "1", "--json"}, fast...)...)
			killAtTrap(t, run, started, c.match)
			// Where the kill hit, as the state document, the user's branch and
			// the host tell it.
			st := p.state()
			u := st.Unit("1-1")
			landed := p.storyCommits()["1-1"]
			left := hostLeftovers(t, srv)
			switch c.match {
			case "fetch -q --no-tags":
				step := runningOnHost(st, "1-1", "box")
				if step == "" || landed != 0 || u.Commit != "" {
					t.Fatalf("kill after the fetch-back: no step running on box (%q), %d commits, commit %q", step, landed, u.Commit)
				}
				t.Logf("killed with 1.1's %s attempt fetched back from box, not yet in its worktree here", step)
			default:
				cs := u.Step(orchestrator.StepCommit)
				if cs == nil || cs.Status != orchestrator.StatusRunning || u.Commit != "" || landed != 1 || len(left) == 0 {
					t.Fatalf("kill after the fast-forward: commit step %+v, recorded %q, %d commits landed, on the host %v", cs, u.Commit, landed, left)
				}
				t.Logf("killed with 1.1 landed on the user's branch, the commit step running, its clone on box (%d entries)", len(left))
			}
			res, code := p.run(nil, "run", "--resume", "--json")
			if code != 0 || res["outcome"] != "done" {
				t.Fatalf("resume exited %d: %v", code, res)
			}
			st = p.state()
			if st.Status != orchestrator.RunDone || p.storyCommits()["1-1"] != 1 || st.Unit("1-1").Host != "box" {
				t.Fatalf("run %s, commits %v, on %s", st.Status, p.storyCommits(), st.Unit("1-1").Host)
			}
			if merges := p.git("rev-list", "--merges", "HEAD"); merges != "" {
				t.Fatalf("merge commits on the user's branch: %s", merges)
			}
			p.checkNothingLeft()
			if left := hostLeftovers(t, srv); len(left) > 0 {
				t.Fatalf("left on the host: %s", strings.Join(left, " "))
			}
			ls := exec.Command("tmux", "-L", "sa-"+strings.TrimPrefix(st.RunID, "run-"), "list-sessions")
			ls.Env = cleanEnv("TMUX_TMPDIR=" + srv.Home)
			if out, err := ls.CombinedOutput(); err == nil {
				t.Fatalf("sessions left in the run's tmux on the host:\n%s", out)
			}
		})
	}
}
