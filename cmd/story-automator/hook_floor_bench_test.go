package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/testbin"
)

// EnvPythonTool names a copy of the Python tool this one replaces (the
// skills/bmad-story-automator directory of mira5557373/bmad-automator);
// BenchmarkStopHookVsFloor then measures its Stop hook beside ours. It runs
// with the python3 first on PATH, which needs the filelock and psutil
// modules (Debian: python3-filelock python3-psutil); EnvPython names
// another interpreter directory to put first.
// EnvCompareBinary names another build of story-automator (an older one)
// whose Stop hook is measured in the same rounds.
const (
	EnvPythonTool    = "STORY_AUTOMATOR_PYTHON_TOOL"
	EnvPython        = "STORY_AUTOMATOR_PYTHON_BIN"
	EnvCompareBinary = "STORY_AUTOMATOR_BENCH_COMPARE"
)

// floorBinary builds testdata/noop static: the cost of starting a Go process.
func floorBinary(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "noop")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./testdata/noop")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the floor: %v\n%s", err, msg)
	}
	return out
}

// candidate is one command measured in the rounds of BenchmarkStopHookVsFloor.
type candidate struct {
	name  string
	argv  []string
	env   []string
	every int // measured every that many rounds (the Python tool is slow)
	walls []time.Duration
	// cpus are the process's CPU times (user + system, its whole life).
	cpus []time.Duration
}

func (c *candidate) run(b *testing.B, stdin string) {
	f, err := os.Open(stdin)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	// An open file, not a pipe fed by a goroutine of ours: the input is there
	// when the process starts, as for the floor, which reads nothing.
	cmd.Stdin, cmd.Env = f, c.env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", c.name, err, out)
	}
	c.walls = append(c.walls, time.Since(start))
	c.cpus = append(c.cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
}

func (c *candidate) median() time.Duration { return medianOf(c.walls) }

func medianOf(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func (c *candidate) p99() time.Duration {
	s := append([]time.Duration(nil), c.walls...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)*99/100]
}

// peakRSSKB runs the command under GNU time, which forks it (Go's own
// process start shares the parent's memory until exec, so the parent's
// size would show in the child's peak). 0 when /usr/bin/time is missing.
func peakRSSKB(b *testing.B, c *candidate, stdin string, n int) int64 {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		return 0
	}
	var peak int64
	for i := 0; i < n; i++ {
		f, err := os.Open(stdin)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command("/usr/bin/time", append([]string{"-f", "rss=%M"}, c.argv...)...)
		cmd.Stdin, cmd.Env = f, c.env
		out, err := cmd.CombinedOutput()
		f.Close()
		if err != nil {
			b.Fatalf("%s under time: %v\n%s", c.name, err, out)
		}
		i := strings.LastIndex(string(out), "rss=")
		kb, _ := strconv.ParseInt(strings.TrimSpace(string(out[i+4:])), 10, 64)
		peak = max(peak, kb)
	}
	return peak
}

// BenchmarkStopHookVsFloor measures a Stop-hook call of the built binary's
// stop-hook (hook-*) and of story-automator-hook (hookbin-*) (a project with
// no marker: what every stop of every session costs, and a bystander:
// another session's run) in rounds with a static Go binary that does
// nothing, the floor, and, when EnvPythonTool names a copy, the Python
// tool's Stop hook on the same project. Rounds interleave the commands so a
// machine shared with other work slows them alike; the figures are medians
// of wall time and of the process's CPU time (user + system).
func BenchmarkStopHookVsFloor(b *testing.B) {
	const rounds = 400
	root := b.TempDir()
	withMarker := b.TempDir()
	ownedMarker(&testing.T{}, withMarker)
	stdin := filepath.Join(b.TempDir(), "stop.json")
	if err := os.WriteFile(stdin, []byte(`{"session_id":"someone","stop_hook_active":true,"hook_event_name":"Stop"}`), 0o600); err != nil {
		b.Fatal(err)
	}
	bin := builtBinary(b)
	cands := []*candidate{
		{name: "floor", argv: []string{floorBinary(b)}, env: cleanEnv(), every: 1},
		{name: "hook-no-marker", argv: []string{bin, "stop-hook"}, env: cleanEnv("PROJECT_ROOT=" + root), every: 1},
		{name: "hook-bystander", argv: []string{bin, "stop-hook"}, env: cleanEnv("PROJECT_ROOT=" + withMarker), every: 1},
		{name: "hookbin-no-marker", argv: []string{testbin.HookPath(b)}, env: cleanEnv("PROJECT_ROOT=" + root), every: 1},
		{name: "hookbin-bystander", argv: []string{testbin.HookPath(b)}, env: cleanEnv("PROJECT_ROOT=" + withMarker), every: 1},
	}
	if other := os.Getenv(EnvCompareBinary); other != "" {
		cands = append(cands, &candidate{name: "compare-no-marker", argv: []string{other, "stop-hook"},
			env: cleanEnv("PROJECT_ROOT=" + root), every: 1})
	}
	var python *candidate
	if dir := os.Getenv(EnvPythonTool); dir != "" {
		env := cleanEnv("PROJECT_ROOT=" + root)
		if py := os.Getenv(EnvPython); py != "" {
			env = append(env, "PATH="+py+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
		python = &candidate{name: "python", argv: []string{filepath.Join(dir, "scripts", "story-automator"), "stop-hook"},
			env: env, every: 10}
		cands = append(cands, python)
	} else {
		b.Logf("%s not set: the Python tool is not measured (see docs/benchmarks.md)", EnvPythonTool)
	}
	for i := 0; i < rounds+10; i++ {
		for _, c := range cands {
			if i%c.every == 0 {
				c.run(b, stdin)
			}
		}
		if i == 9 { // warm-up rounds: page cache, first-run effects
			for _, c := range cands {
				c.walls, c.cpus = nil, nil
			}
		}
	}
	floor, floorCPU := cands[0].median(), medianOf(cands[0].cpus)
	for _, c := range cands {
		b.ReportMetric(ms(c.median()), c.name+"-median-ms")
		b.ReportMetric(ms(c.p99()), c.name+"-p99-ms")
		b.ReportMetric(ms(medianOf(c.cpus)), c.name+"-cpu-median-ms")
		if c.name != "floor" {
			b.ReportMetric(float64(c.median())/float64(floor), c.name+"-x-floor")
			b.ReportMetric(float64(medianOf(c.cpus))/float64(floorCPU), c.name+"-cpu-x-floor")
		}
		if rss := peakRSSKB(b, c, stdin, 20); rss > 0 {
			b.ReportMetric(float64(rss)/1024, c.name+"-peak-rss-MiB")
		}
	}
	if python != nil {
		b.ReportMetric(float64(python.median())/float64(cands[1].median()), "python-x-hook")
	}
}
