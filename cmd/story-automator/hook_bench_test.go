package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// procStats runs the built binary n times and returns wall-time percentiles
// and the largest peak RSS seen.
type procStats struct {
	median, p99 time.Duration
	maxRSSKB    int64
}

func measureProcess(b *testing.B, n int, setup func(i int), args []string, env []string, stdin []byte) procStats {
	b.Helper()
	bin := builtBinary(b)
	var walls []time.Duration
	var rss int64
	for i := 0; i < n; i++ {
		if setup != nil {
			setup(i)
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(stdin)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v", args, err)
		}
		walls = append(walls, time.Since(start))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > rss {
			rss = ru.Maxrss
		}
	}
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	return procStats{median: walls[len(walls)/2], p99: walls[len(walls)*99/100], maxRSSKB: rss}
}

func (s procStats) report(b *testing.B) {
	b.ReportMetric(float64(s.median.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(s.p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(s.maxRSSKB)/1024, "peak-rss-MB")
}

const hookCalls = 300

// BenchmarkStopHookProcess measures the whole-process cost of one stop-hook
// call of the built binary, the product's hottest path.
func BenchmarkStopHookProcess(b *testing.B) {
	owner := []byte(`{"session_id":"owner","stop_hook_active":true,"hook_event_name":"Stop"}`)
	bystander := []byte(`{"session_id":"someone","stop_hook_active":true,"hook_event_name":"Stop"}`)
	b.Run("no-marker", func(b *testing.B) {
		root := b.TempDir()
		measureProcess(b, hookCalls, nil, []string{"stop-hook"}, cleanEnv("PROJECT_ROOT="+root), owner).report(b)
	})
	b.Run("bystander", func(b *testing.B) {
		root := b.TempDir()
		ownedMarker(&testing.T{}, root)
		measureProcess(b, hookCalls, nil, []string{"stop-hook"}, cleanEnv("PROJECT_ROOT="+root), bystander).report(b)
	})
	b.Run("owner-block", func(b *testing.B) {
		root := b.TempDir()
		ownedMarker(&testing.T{}, root)
		// A cap above the call count keeps every call a block.
		env := cleanEnv("PROJECT_ROOT="+root, fmt.Sprintf("STORY_AUTOMATOR_MAX_STOP_BLOCKS=%d", 100))
		reset := func(i int) {
			if i%90 == 0 {
				runQuiet(b, root, "marker", "heartbeat")
			}
		}
		measureProcess(b, hookCalls, reset, []string{"stop-hook"}, env, owner).report(b)
	})
	b.Run("breaker-release", func(b *testing.B) {
		root := b.TempDir()
		ownedMarker(&testing.T{}, root)
		// With a cap of 1 every call without progress releases the stop.
		env := cleanEnv("PROJECT_ROOT="+root, "STORY_AUTOMATOR_MAX_STOP_BLOCKS=1")
		measureProcess(b, hookCalls, nil, []string{"stop-hook"}, env, owner).report(b)
	})
}

func runQuiet(b *testing.B, root string, args ...string) {
	cmd := exec.Command(builtBinary(b), args...)
	cmd.Env = cleanEnv("PROJECT_ROOT=" + root)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %v %s", args, err, out)
	}
}

// BenchmarkHeartbeatContention measures marker heartbeat throughput with 16
// processes of the built binary contending for the lock.
func BenchmarkHeartbeatContention(b *testing.B) {
	root := b.TempDir()
	ownedMarker(&testing.T{}, root)
	bin := builtBinary(b)
	const procs, each = 16, 20
	env := cleanEnv("PROJECT_ROOT=" + root)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	start := time.Now()
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				cmd := exec.Command(bin, "marker", "heartbeat")
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					mu.Lock()
					failures = append(failures, strings.TrimSpace(string(out)))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(failures) > 0 {
		b.Fatalf("%d heartbeats failed: %s", len(failures), failures[0])
	}
	b.ReportMetric(float64(procs*each)/elapsed.Seconds(), "heartbeats/s")
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(procs*each), "ms/heartbeat")
}
