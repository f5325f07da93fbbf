package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/workflows/sample"
)

// benchBuildAutoProject writes the sample shaped as BMAD 6.12 on the
// build-auto pipeline (its config.toml, stand-in worker skill and pinned
// policy) with n independent stories in place of its four, and no test
// command (the run's own work alone), and commits it.
func benchBuildAutoProject(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	if err := sample.WriteBuildAutoSample(root); err != nil {
		b.Fatal(err)
	}
	var epics, sprint strings.Builder
	epics.WriteString("# Epics\n\n## Epic 1: Benchmark\n\n")
	sprint.WriteString("development_status:\n  epic-1: backlog\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&epics, "### Story 1.%d: Feature %d\n\nAs a user I want feature %d.\n\n", i, i, i)
		fmt.Fprintf(&sprint, "  1-%d-feature-%d: backlog\n", i, i)
	}
	sprint.WriteString("  epic-1-retrospective: optional\n")
	for name, text := range map[string]string{
		"_bmad-output/planning-artifacts/epics.md":                 epics.String(),
		"_bmad-output/implementation-artifacts/sprint-status.yaml": sprint.String(),
		".story-automator/workflow.yaml":                           "version: 1\npipeline: build-auto\n",
	} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
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

// BenchmarkRunStoriesBuildAuto is BenchmarkRunStories on BMAD 6.12's
// build-auto pipeline (one worker dispatch a story, then the retro) at 10
// and 100 stories: the orchestration overhead per step must not grow with
// the backlog (100 ≤ 1.3× the 10).
func BenchmarkRunStoriesBuildAuto(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("stories-%d", n), func(b *testing.B) {
			benchRunProject(b, func() string { return benchBuildAutoProject(b, n) })
		})
	}
}
