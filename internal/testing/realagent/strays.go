package realagent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// StopStrays kills, when the test ends, every process still running a
// program that lives under dir. A real CLI can leave a daemon behind in the
// private home a test gives it: Codex 0.169's interactive TUI starts a
// managed app-server from $CODEX_HOME/packages that outlives the TUI, and
// on a CI machine each test would leave one running.
func StopStrays(t testing.TB, dir string) {
	t.Helper()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	t.Cleanup(func() {
		for _, pid := range ProcessesUnder(dir) {
			t.Logf("stopping %d, left running from %s", pid, dir)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// ProcessesUnder lists the processes whose executable lies under dir
// (Linux: /proc; elsewhere none).
func ProcessesUnder(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, err := os.Readlink("/proc/" + e.Name() + "/exe")
		if err == nil && strings.HasPrefix(strings.TrimSuffix(exe, " (deleted)"), prefix) {
			pids = append(pids, pid)
		}
	}
	return pids
}
