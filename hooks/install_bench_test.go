package hooks

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

const benchCalls = 200

// benchSettings is a settings file of realistic size: permissions and forty
// hooks over several events.
func benchSettings() string {
	var hooks []string
	for i := range 40 {
		hooks = append(hooks, fmt.Sprintf(`{"matcher": "Tool%d", "hooks": [{"type": "command", "command": "check-%d.sh", "timeout": 5}]}`, i, i))
	}
	return `{"permissions": {"allow": ["Bash(go test:*)", "Bash(make:*)"], "deny": []},
  "env": {"A": "1"},
  "hooks": {"PreToolUse": [` + strings.Join(hooks, ",") + `], "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`
}

func reportDurations(b *testing.B, d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkInstall measures one in-process install on a realistic file: when the
// hook is already there (read, parse, compare) and when it is not (plus backup
// and two atomic, fsynced writes).
func BenchmarkInstall(b *testing.B) {
	b.Run("already-installed", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "settings.json")
		writeFile(b, path, benchSettings(), 0o600)
		mustInstall(b, path, testHook, Options{})
		for range b.N {
			d := make([]time.Duration, 0, benchCalls)
			for range benchCalls {
				start := time.Now()
				res, err := Install(path, testHook, Options{})
				d = append(d, time.Since(start))
				if err != nil || res.Changed {
					b.Fatalf("%+v %v", res, err)
				}
			}
			reportDurations(b, d)
		}
	})
	b.Run("adds-entry", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "settings.json")
		for range b.N {
			d := make([]time.Duration, 0, benchCalls)
			for range benchCalls {
				writeFile(b, path, benchSettings(), 0o600)
				start := time.Now()
				res, err := Install(path, testHook, Options{})
				d = append(d, time.Since(start))
				if err != nil || !res.Changed {
					b.Fatalf("%+v %v", res, err)
				}
			}
			reportDurations(b, d)
		}
	})
}
