package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// benchProject writes a BMAD project of one epic with n independent stories
// and commits it.
func benchProject(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	art := filepath.Join(root, "_bmad-output", "implementation-artifacts")
	var epics, sprint strings.Builder
	epics.WriteString("# Epics\n\n## Epic 1: Benchmark\n\n")
	sprint.WriteString("development_status:\n  epic-1: backlog\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&epics, "### Story 1.%d: Feature %d\n\nAs a user I want feature %d.\n\n", i, i, i)
		fmt.Fprintf(&sprint, "  1-%d-feature-%d: backlog\n", i, i)
	}
	sprint.WriteString("  epic-1-retrospective: optional\n")
	for name, text := range map[string]string{"epics.md": epics.String(), "sprint-status.yaml": sprint.String()} {
		if err := os.MkdirAll(art, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(art, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "plan"}} {
		c := exec.Command("git", append([]string{"-C", root}, args...)...)
		c.Env = cleanEnv("GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return root
}

// stepOverheads returns, per verified step in the order they were verified,
// the time since the previous verification minus the agent's own time: what
// the orchestrator spent (spawn, monitor, verify, state, marker, git).
func stepOverheads(b *testing.B, st *orchestrator.State) []time.Duration {
	type step struct {
		at    time.Time
		agent time.Duration
	}
	var steps []step
	for _, u := range st.Units {
		for _, s := range u.Steps {
			at, ok := marker.ParseTime(s.VerifiedAt)
			if !ok {
				continue
			}
			var agent time.Duration
			for _, a := range s.Attempts {
				agent += time.Duration(a.AgentMs) * time.Millisecond
			}
			steps = append(steps, step{at, agent})
		}
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].at.Before(steps[j].at) })
	prev, ok := marker.ParseTime(st.StartedAt)
	if !ok {
		b.Fatal("state without startedAt")
	}
	out := make([]time.Duration, 0, len(steps))
	for _, s := range steps {
		out = append(out, s.at.Sub(prev)-s.agent)
		prev = s.at
	}
	return out
}

// runBenchSizes are the backlog sizes BenchmarkRunStories runs: 10 and 50
// stories always, 200 when STORY_AUTOMATOR_BENCH_LARGE=1 (it takes minutes
// on two cores).
func runBenchSizes() []int {
	if os.Getenv("STORY_AUTOMATOR_BENCH_LARGE") == "1" {
		return []int{10, 50, 200}
	}
	return []int{10, 50}
}

// BenchmarkRunStories runs n stories (create, dev, automate, review, commit
// each, then the retro) with the instant simulated agent in real tmux and
// reports the wall time and the orchestration overhead per step: whether a
// step costs the same at 200 stories as at 10.
func BenchmarkRunStories(b *testing.B) {
	for _, n := range runBenchSizes() {
		b.Run(fmt.Sprintf("stories-%d", n), func(b *testing.B) {
			benchRunProject(b, func() string { return benchProject(b, n) })
		})
	}
}

// benchRunProject runs a project b.N times, each a fresh one from project,
// and reports the figures of the last run and the overheads of all of them.
func benchRunProject(b *testing.B, project func() string) {
	bin := builtBinary(b)
	var walls, agents []time.Duration
	var overheads []time.Duration
	steps := 0
	for i := 0; i < b.N; i++ {
		socket := tmuxtest.Socket(b)
		root := project()
		b.Cleanup(func() { tmuxtest.Shutdown(socket, filepath.Join(root, ".story-automator", "sessions")) })
		c := exec.Command(bin, "--project-root", root, "--tmux-socket", socket, "run", "--agent", "sim", "--json")
		c.Env = cleanEnv("STORY_AUTOMATOR_SIM_DELAY=0")
		start := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("run: %v\n%s", err, out)
		}
		walls = append(walls, time.Since(start))
		st, err := orchestrator.LoadState(orchestrator.LatestState(marker.NewStore(root, func(string) string { return "" }), root))
		if err != nil {
			b.Fatal(err)
		}
		var agent time.Duration
		for _, u := range st.Units {
			for _, s := range u.Steps {
				for _, a := range s.Attempts {
					agent += time.Duration(a.AgentMs) * time.Millisecond
				}
			}
		}
		agents = append(agents, agent)
		o := stepOverheads(b, st)
		overheads = append(overheads, o...)
		steps = len(o)
	}
	sort.Slice(overheads, func(i, j int) bool { return overheads[i] < overheads[j] })
	wall, agent := walls[len(walls)-1], agents[len(agents)-1]
	b.ReportMetric(wall.Seconds(), "total-s")
	b.ReportMetric(float64(steps), "steps")
	b.ReportMetric(ms(overheads[len(overheads)/2]), "median-overhead-ms/step")
	b.ReportMetric(ms(overheads[len(overheads)*9/10]), "p90-overhead-ms/step")
	b.ReportMetric(ms((wall-agent)/time.Duration(steps)), "mean-overhead-ms/step")
	b.ReportMetric(ms(agent/time.Duration(steps)), "mean-agent-ms/step")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
