package monitor_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/story-automator/story-automator/monitor"
)

// concurrentMonitors is how many children and monitors
// BenchmarkConcurrentMonitors runs at once (issue 13: 200 on two cores);
// STORY_AUTOMATOR_BENCH_MONITORS changes it.
func concurrentMonitors(b *testing.B) int {
	if s := os.Getenv("STORY_AUTOMATOR_BENCH_MONITORS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("STORY_AUTOMATOR_BENCH_MONITORS=%q: want a positive number", s)
		}
		return n
	}
	return 200
}

// BenchmarkConcurrentMonitors starts n sim children that all exit at the
// same moment, with one monitor-session process waiting on each, and
// reports child exit → monitor return (p50, p99) and its first part, child
// exit → exit recorded by the runner; the monitors' mean CPU time; the
// monitors that did not return completed; and the monitors' summed resident memory while they all
// wait (VmRSS from /proc, shared pages counted in every process, as `ps`
// would add them up) and their summed peaks (VmHWM).
func BenchmarkConcurrentMonitors(b *testing.B) {
	n := concurrentMonitors(b)
	p := newProject(b)
	// Every child exits at the same moment, after all monitors are up:
	// spawning takes some tens of milliseconds per child on two cores.
	exitAt := time.Now().Add(5*time.Second + time.Duration(n)*100*time.Millisecond)
	type waiter struct {
		art  string
		pid  int
		wait func() (int, error)
		cpu  func() time.Duration
	}
	ws := make([]waiter, n)
	names := make([]string, n)
	for i := range ws {
		art := filepath.Join(p.root, fmt.Sprintf("artifact-%d", i))
		name := p.spawnSim([]string{"STORY_AUTOMATOR_SIM_BEHAVIOUR=finish", "STORY_AUTOMATOR_SIM_ARTIFACT=" + art,
			"STORY_AUTOMATOR_SIM_DELAY=" + time.Until(exitAt).String()})
		cmd := p.command(nil, "monitor-session", name, "--timeout", "120s")
		var out strings.Builder
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		names[i] = name
		ws[i] = waiter{art: art, pid: cmd.Process.Pid, cpu: func() time.Duration {
			return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}, wait: func() (int, error) {
			err := cmd.Wait()
			var r monitor.Result
			if jerr := json.Unmarshal([]byte(out.String()), &r); jerr != nil || r.FinalState != monitor.Completed {
				return exitCodeOf(err), fmt.Errorf("%s: %q", name, out.String())
			}
			return exitCodeOf(err), nil
		}}
	}
	// Sample memory shortly before the children exit, when every monitor waits.
	time.Sleep(time.Until(exitAt.Add(-500 * time.Millisecond)))
	if time.Now().After(exitAt) {
		b.Fatalf("spawning %d children took past their exit time; the figures would not be of waiting monitors", n)
	}
	var rssKB, hwmKB, pssKB, anonKB int64
	for _, w := range ws {
		rss, hwm := procMemKB(w.pid)
		pss, anon := procPssKB(w.pid)
		rssKB, hwmKB, pssKB, anonKB = rssKB+rss, hwmKB+hwm, pssKB+pss, anonKB+anon
	}
	var mu sync.Mutex
	var lat []time.Duration
	failures := 0
	var wg sync.WaitGroup
	var rlat []time.Duration
	var cpu time.Duration
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := w.wait()
			end := time.Now()
			mu.Lock()
			cpu += w.cpu()
			mu.Unlock()
			var exited time.Time
			if err == nil {
				exited, err = simExitTime(w.art)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil || code != 0 {
				failures++
				b.Logf("monitor exit %d: %v", code, err)
				return
			}
			lat = append(lat, end.Sub(exited))
			if at, err := exitRecorded(p.root, names[i]); err == nil {
				rlat = append(rlat, at.Sub(exited))
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(n), "monitors")
	b.ReportMetric(float64(failures), "failures")
	if len(lat) > 0 {
		b.ReportMetric(ms(percentile(lat, 0.5)), "p50-ms")
		b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
	}
	if len(rlat) > 0 {
		// The first half of the latency: the child's exit → its runner's record of it.
		b.ReportMetric(ms(percentile(rlat, 0.5)), "exit-recorded-p50-ms")
		b.ReportMetric(ms(percentile(rlat, 0.99)), "exit-recorded-p99-ms")
	}
	if len(ws) > 0 {
		b.ReportMetric(ms(cpu)/float64(len(ws)), "monitor-cpu-ms")
	}
	b.ReportMetric(float64(rssKB)/1024, "sum-rss-MiB")
	b.ReportMetric(float64(hwmKB)/1024, "sum-peak-rss-MiB")
	// Proportional set size: each page shared by k processes counts 1/k in
	// each (the binary's pages are shared by all monitors): what the
	// monitors together really keep in memory. Anonymous: their own pages.
	b.ReportMetric(float64(pssKB)/1024, "sum-pss-MiB")
	b.ReportMetric(float64(anonKB)/1024, "sum-anon-MiB")
}

// exitRecorded is when the runner of session name recorded its child's exit.
func exitRecorded(root, name string) (time.Time, error) {
	raw, err := os.ReadFile(filepath.Join(root, ".story-automator", "sessions", name+".json"))
	if err != nil {
		return time.Time{}, err
	}
	var st struct {
		ExitedAt string `json:"exitedAt"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, st.ExitedAt)
}

// procPssKB reads a process's proportional and anonymous resident memory.
func procPssKB(pid int) (pss, anon int64) {
	kb := procFieldsKB(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	return kb["Pss"], kb["Anonymous"]
}

// procFieldsKB reads the "Name:   123 kB" lines of a /proc file, by name;
// an unreadable file has none.
func procFieldsKB(path string) map[string]int64 {
	fields := map[string]int64{}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fields
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k], _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return fields
}

// simExitTime reads when agent-sim wrote its artifact, its last act before it exits.
func simExitTime(path string) (time.Time, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, strings.TrimSpace(strings.TrimPrefix(string(raw), "written by agent-sim at ")))
}

// procMemKB reads a process's resident set and its peak from /proc.
func procMemKB(pid int) (rss, hwm int64) {
	kb := procFieldsKB(fmt.Sprintf("/proc/%d/status", pid))
	return kb["VmRSS"], kb["VmHWM"]
}
