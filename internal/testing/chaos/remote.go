package chaos

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/testing/sshd"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
)

// remoteRound is a kill round whose stories run over local and an ssh
// host (story-automator installed there): the run is killed and resumed
// as in any round, and afterwards the host keeps the project's
// repository and nothing else of the run (no clone, branch or ref).
func remoteRound(cfg Config, dir string, rng *rand.Rand, mode string) outcome {
	srv := cfg.SSHD()
	defer srv.Stop()
	setup := func(p *Sample) error {
		wf := "hosts:\n  - name: box\n    ssh: " + sshd.Alias + "\n    sshCommand: " + srv.SSHCommand() +
			"\n    dir: " + srv.WorkDir + "\n    parallel: 1\n    agents: [sim]\n"
		if err := os.MkdirAll(filepath.Join(p.Root, ".story-automator"), 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(p.Root, ".story-automator", "workflow.yaml"), []byte(wf), 0o600); err != nil {
			return err
		}
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "hosts"}} {
			if _, err := p.Git(args...); err != nil {
				return err
			}
		}
		res, exit, err := p.Run(2*time.Minute, "hosts", "install", "box", "--json")
		if err == nil && exit != 0 {
			err = fmt.Errorf("hosts install: exit %d %v", exit, res)
		}
		return err
	}
	var onHost []string
	o := killRoundWith(cfg, dir, rng, mode, []string{"--parallel", "2"}, func(p *Sample) error {
		if err := setup(p); err != nil {
			return err
		}
		onHost = append(onHost, p.Root)
		return nil
	})
	if len(onHost) == 1 {
		if st, err := orchestrator.LoadState(orchestrator.LatestState(marker.NewStore(onHost[0], func(string) string { return "" }), onHost[0])); err == nil {
			var stories []string
			for _, u := range st.Units {
				if u.Host == "box" {
					stories = append(stories, u.Dotted)
				}
			}
			o.story = append(o.story, "on box: "+strings.Join(stories, ", "))
		}
	}
	o.findings.Leftovers = append(o.findings.Leftovers, hostLeftovers(srv)...)
	return o
}

// hostLeftovers is what runs left on the host beyond the project's repository.
func hostLeftovers(srv *sshd.Server) []string {
	var left []string
	for _, pattern := range []string{"worktrees/*/*/*", "repos/*.git/refs/heads/story-automator/*/*", "repos/*.git/refs/story-automator/*/*/*"} {
		found, _ := filepath.Glob(filepath.Join(srv.WorkDir, pattern))
		for _, f := range found {
			left = append(left, "on the host: "+f)
		}
	}
	return left
}
