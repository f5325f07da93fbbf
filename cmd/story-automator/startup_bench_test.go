package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStartupVsFloor measures the main binary's start-up, as every
// command but the long-running ones pays it: `--version` (start-up alone)
// and `status --json` in a sample project (start-up and a small command),
// in interleaved rounds with the static no-op floor, and with the build
// EnvCompareBinary names (an older one) when it is set. Figures are medians
// of the process's CPU time (user + system) and wall time.
func BenchmarkStartupVsFloor(b *testing.B) {
	const rounds = 300
	bin := builtBinary(b)
	project := filepath.Join(b.TempDir(), "project")
	if out, err := exec.Command(bin, "sample", "--five-step", project).CombinedOutput(); err != nil {
		b.Fatalf("sample: %v\n%s", err, out)
	}
	stdin := filepath.Join(b.TempDir(), "empty")
	if err := os.WriteFile(stdin, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	env := cleanEnv("PROJECT_ROOT=" + project)
	cands := []*candidate{
		{name: "floor", argv: []string{floorBinary(b)}, env: env, every: 1},
		{name: "version", argv: []string{bin, "--version"}, env: env, every: 1},
		{name: "status", argv: []string{bin, "status", "--json"}, env: env, every: 1},
	}
	if other := os.Getenv(EnvCompareBinary); other != "" {
		cands = append(cands,
			&candidate{name: "compare-version", argv: []string{other, "--version"}, env: env, every: 1},
			&candidate{name: "compare-status", argv: []string{other, "status", "--json"}, env: env, every: 1})
	}
	for i := 0; i < rounds+10; i++ {
		for _, c := range cands {
			c.run(b, stdin)
		}
		if i == 9 { // warm-up rounds
			for _, c := range cands {
				c.walls, c.cpus = nil, nil
			}
		}
	}
	floorCPU := medianOf(cands[0].cpus)
	for _, c := range cands {
		b.ReportMetric(ms(c.median()), c.name+"-median-ms")
		b.ReportMetric(ms(medianOf(c.cpus)), c.name+"-cpu-median-ms")
		if c.name != "floor" {
			b.ReportMetric(float64(medianOf(c.cpus))/float64(floorCPU), c.name+"-cpu-x-floor")
		}
	}
}
