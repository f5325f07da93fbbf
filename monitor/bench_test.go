package monitor_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Benchmarks of issue 3's speed targets, on the built binary and a private
// tmux server. Each reports its figures with b.ReportMetric; run with
// `make bench` (-benchtime 1x: every benchmark takes its own samples).

func percentile(v []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(q*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// artifactTime reads when agent-sim wrote its artifact: the last thing it
// does before it exits.
func artifactTime(b *testing.B, path string) time.Time {
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	ts := strings.TrimSpace(strings.TrimPrefix(string(raw), "written by agent-sim at "))
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		b.Fatalf("artifact %q: %v", raw, err)
	}
	return t
}

// detection spawns a sim that finishes after delay and measures from its
// exit to the return of a monitor-session started right after the spawn.
func detection(b *testing.B, p *project, i int, delay time.Duration) time.Duration {
	art := filepath.Join(p.root, fmt.Sprintf("artifact-%d", i))
	name := p.spawnSim([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=finish", "STORY_AUTOMATOR_SIM_ARTIFACT=" + art,
		"STORY_AUTOMATOR_SIM_DELAY=" + delay.String()})
	wait := p.startMonitor(name, "--timeout", "60s")
	r, code := wait()
	end := time.Now()
	if code != 0 {
		b.Fatalf("monitor: %d %+v", code, r)
	}
	return end.Sub(artifactTime(b, art))
}

func BenchmarkDetectionLatency(b *testing.B) {
	p := newProject(b)
	var lat []time.Duration
	for i := 0; i < 40; i++ {
		lat = append(lat, detection(b, p, i, 250*time.Millisecond))
	}
	b.ReportMetric(ms(percentile(lat, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
}

func BenchmarkDetectionLatency32Children(b *testing.B) {
	p := newProject(b)
	var mu sync.Mutex
	var lat []time.Duration
	for round := 0; round < 2; round++ {
		var wg sync.WaitGroup
		start := time.Now()
		for i := 0; i < 32; i++ {
			// All 32 finish at about the same moment, while all 32 monitors wait.
			delay := 2500*time.Millisecond - time.Since(start)
			wg.Add(1)
			art := filepath.Join(p.root, fmt.Sprintf("artifact-%d-%d", round, i))
			name := p.spawnSim([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=finish", "STORY_AUTOMATOR_SIM_ARTIFACT=" + art,
				"STORY_AUTOMATOR_SIM_DELAY=" + delay.String()})
			wait := p.startMonitor(name, "--timeout", "60s")
			go func() {
				defer wg.Done()
				r, code := wait()
				end := time.Now()
				if code != 0 {
					b.Errorf("monitor: %d %+v", code, r)
					return
				}
				mu.Lock()
				lat = append(lat, end.Sub(artifactTime(b, art)))
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(ms(percentile(lat, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
}

// BenchmarkMonitorCPUOver60s runs monitor-session for a full 60 s wait on
// three agents at once and reports the CPU time (user+system, tmux children
// included) each monitor used: a hanging agent that printed a line
// (cpu-ms), a started agent that prints nothing (silent-cpu-ms, watched with
// the Claude screen heuristic), and a session whose runner never records an
// agent (stalled-cpu-ms: tmux is asked once a second whether it exists).
func BenchmarkMonitorCPUOver60s(b *testing.B) {
	p := newProject(b)
	sessions := map[string]string{
		"cpu-ms":         p.spawnSim([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=hang"}),
		"silent-cpu-ms":  p.spawnSim([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=silent"}),
		"stalled-cpu-ms": p.stalledSession(),
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	cpu := map[string]time.Duration{}
	for metric, name := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := p.command(nil, "monitor-session", name, "--timeout", "60s")
			out, _ := cmd.Output()
			if r := decodeResult(b, out); r.FinalState != "timeout" {
				b.Errorf("%s: %+v", metric, r)
				return
			}
			mu.Lock()
			cpu[metric] = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			mu.Unlock()
		}()
	}
	wg.Wait()
	for metric, d := range cpu {
		b.ReportMetric(ms(d), metric)
	}
}

// BenchmarkSpawnToAgentRunning measures from starting `session spawn` to the
// agent process running (agent-sim records its prompt as its first act),
// with the tmux server already up.
func BenchmarkSpawnToAgentRunning(b *testing.B) {
	p := newProject(b)
	p.spawnSim([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=hang"}) // keeps the server up
	var lat []time.Duration
	for i := 0; i < 30; i++ {
		rec := filepath.Join(p.root, fmt.Sprintf("prompt-%d", i))
		start := time.Now()
		p.spawnSim([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=finish", "STORY_AUTOMATOR_SIM_PROMPT_FILE=" + rec}, "--prompt", "go")
		deadline := time.Now().Add(10 * time.Second)
		var fi os.FileInfo
		var err error
		for fi, err = os.Stat(rec); err != nil; fi, err = os.Stat(rec) {
			if time.Now().After(deadline) {
				b.Fatal("the agent never started")
			}
			time.Sleep(2 * time.Millisecond)
		}
		lat = append(lat, fi.ModTime().Sub(start))
	}
	b.ReportMetric(ms(percentile(lat, 0.5)), "median-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
}
