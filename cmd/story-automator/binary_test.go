package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Shared by every end-to-end test of this package: the binary is built once,
// lazily, into a temp dir, so tests that need no binary pay nothing.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// builtBinary returns the path of a freshly built story-automator binary.
func builtBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "story-automator-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "story-automator")
		cmd := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", binPath, ".")
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = &buildError{out: string(out), err: err}
		}
	})
	if binErr != nil {
		t.Fatalf("build story-automator: %v", binErr)
	}
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// cleanEnv is the environment for a child process of a test: the test's own
// environment without variables that would make the binary act as a child
// session, an agent session or a tmux client.
func cleanEnv(extra ...string) []string {
	drop := map[string]bool{
		"STORY_AUTOMATOR_CHILD": true, "STORY_AUTOMATOR_SESSION": true, "STORY_AUTOMATOR_STATE_DIR": true,
		"STORY_AUTOMATOR_ACTIVE_MARKER": true, "CLAUDE_CODE_SESSION_ID": true, "CODEX_THREAD_ID": true,
		"TMUX": true, "TMUX_PANE": true, "PROJECT_ROOT": true, "CLAUDE_PROJECT_DIR": true,
		"STORY_AUTOMATOR_TMUX_SOCKET": true, "STORY_AUTOMATOR_MAX_STOP_BLOCKS": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}
