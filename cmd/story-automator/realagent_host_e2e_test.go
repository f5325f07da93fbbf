package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/orchestrator"
)

// The real Claude Code on an ssh host: `run --agent claude --host box
// --stories 1-1 --trust-project` (each story's clone there is a folder
// Claude Code has not seen) runs every step's child in the host's tmux (its own HOME,
// work directory and offline Claude settings, given by the host's sshd),
// against model-sim here; the story ends done with one commit and the host
// keeps only the project's repository.
func TestRealClaudeRunOnAnSSHHost(t *testing.T) {
	cli := realagent.Require(t, "claude")
	srv := sshd.Start(t)
	sim, err := modelsim.Start(modelsim.Options{Exe: builtBinary(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	realagent.StopStrays(t, srv.Home)
	oenv, err := offline.Claude(offline.Config{Home: srv.Home, BaseURL: sim.URL(), Trusted: []string{srv.WorkDir}})
	if err != nil {
		t.Fatal(err)
	}
	// The host's logins: the pinned CLI on PATH and Claude's offline settings.
	srv.SetEnv(append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"))...)
	p := hostsProject(t, srv, "1")
	wf := filepath.Join(p.root, ".story-automator", "workflow.yaml")
	data, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wf, []byte(strings.Replace(string(data), "agents: [sim]", "agents: [claude]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git("commit", "-q", "-am", "claude on box")
	start := time.Now()
	res, code := p.run(nil, append([]string{"run", "--agent", "claude", "--host", "box", "--epic", "1", "--stories", "1-1", "--trust-project", "--json"}, fast...)...)
	wall := time.Since(start)
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run: exit %d %v", code, res)
	}
	st := p.state()
	u := st.Unit("1-1")
	if u.Status != orchestrator.StatusDone || u.Host != "box" || p.storyCommits()["1-1"] != 1 {
		t.Fatalf("1.1 %s on %s, commits %v", u.Status, u.Host, p.storyCommits())
	}
	for _, s := range u.Steps {
		for _, a := range s.Attempts {
			if a.Agent != "claude" || !strings.Contains(a.Detail, "on host box") {
				t.Fatalf("%s attempt %d: agent %s, detail %q; want claude on box", s.Name, a.N, a.Agent, a.Detail)
			}
			t.Logf("%s attempt %d: %s", s.Name, a.N, a.Detail)
		}
	}
	if len(sim.Exchanges()) == 0 {
		t.Fatal("model-sim was never asked: the steps did not go through Claude Code")
	}
	if left := hostLeftovers(t, srv); len(left) > 0 {
		t.Fatalf("left on the host: %s", strings.Join(left, " "))
	}
	// The host's tmux server of the run is gone with its sessions.
	ls := exec.Command("tmux", "-L", "sa-"+strings.TrimPrefix(st.RunID, "run-"), "list-sessions")
	ls.Env = append(os.Environ(), "TMUX_TMPDIR="+srv.Home, "TMUX=")
	if out, err := ls.CombinedOutput(); err == nil {
		t.Fatalf("sessions left in the host's tmux: %s", out)
	}
	t.Logf("real Claude Code on the ssh host: story 1.1 done in %s", wall.Round(time.Second))
}
