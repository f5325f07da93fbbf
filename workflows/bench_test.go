package workflows

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// benchProject writes a BMAD project of epics×stories stories, every story with
// a story file, and returns it opened.
func benchProject(b *testing.B, epics, stories int) *Layout {
	b.Helper()
	root := b.TempDir()
	var sprint, epicsMD strings.Builder
	sprint.WriteString("# generated\n# comments survive\n\ndevelopment_status:\n")
	files := map[string]string{}
	for e := 1; e <= epics; e++ {
		fmt.Fprintf(&sprint, "  # Epic %d\n  epic-%d: in-progress\n", e, e)
		fmt.Fprintf(&epicsMD, "## Epic %d: Epic number %d\n\n", e, e)
		for s := 1; s <= stories; s++ {
			fmt.Fprintf(&sprint, "  %d-%d-story-%d: ready-for-dev\n", e, s, s)
			fmt.Fprintf(&epicsMD, "### Story %d.%d: Story %d\n\nAs a user I want %d.%d.\n\n", e, s, s, e, s)
			if s > 1 {
				fmt.Fprintf(&epicsMD, "Depends on: %d.%d\n\n", e, s-1)
			}
			files[fmt.Sprintf("%s/%d-%d-story-%d.md", DefaultArtifactsDir, e, s, s)] = fmt.Sprintf("# Story %d.%d\n\nStatus: ready-for-dev\n\n## Story\n\nText.\n", e, s)
		}
		fmt.Fprintf(&sprint, "  epic-%d-retrospective: optional\n\n", e)
	}
	files[filepath.Join(DefaultArtifactsDir, SprintStatusFile)] = sprint.String()
	files["_bmad-output/planning-artifacts/epics.md"] = epicsMD.String()
	writeFiles(b, root, files)
	p, err := Open(root)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// report prints the median and p99 of durations.
func report(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkVerifyStep measures what confirming one step costs the
// orchestrator: building the step's verifier (policy, story lookup) and one
// Verify, on a project of 5 epics × 20 stories.
func BenchmarkVerifyStep(b *testing.B) {
	p := benchProject(b, 5, 20)
	pol := DefaultPolicy()
	for _, step := range []string{StepCreate, StepReview, StepRetro} {
		b.Run(step, func(b *testing.B) {
			d := make([]time.Duration, 0, 300)
			for i := 0; i < 300; i++ {
				key := StoryKey{Epic: fmt.Sprint(1 + i%5), Num: 1 + i%20}
				start := time.Now()
				c, err := p.Verifier(step, key, pol)
				if err != nil {
					b.Fatal(err)
				}
				c.Verify(context.Background())
				d = append(d, time.Since(start))
			}
			report(b, d)
		})
	}
}

// BenchmarkSetStoryStatus measures one status change: the sprint-status edit
// under its lock with an atomic, fsynced write, plus the story file's.
func BenchmarkSetStoryStatus(b *testing.B) {
	p := benchProject(b, 5, 20)
	statuses := []string{StatusInProgress, StatusReview, StatusDone}
	d := make([]time.Duration, 0, 300)
	for i := 0; i < 300; i++ {
		key := StoryKey{Epic: fmt.Sprint(1 + i%5), Num: 1 + i%20}
		start := time.Now()
		if err := p.SetStoryStatus(key, statuses[i%3]); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	report(b, d)
}
