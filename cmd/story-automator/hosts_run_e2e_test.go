package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows/sample"
)

// hostsProject is the sample project with the test's sshd as host "box"
// (story-automator installed there by `hosts install`), committed.
func hostsProject(t *testing.T, srv *sshd.Server, parallel string) *runProject {
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
	if res, code := p.run(nil, "hosts", "install", "box", "--json"); code != 0 {
		t.Fatalf("hosts install: exit %d %v", code, res)
	}
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
