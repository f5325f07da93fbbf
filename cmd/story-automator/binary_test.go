package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
	"github.com/story-automator/story-automator/internal/testing/testbin"
)

// builtBinary returns the path of the binary, built once for all end-to-end tests.
func builtBinary(t testing.TB) string { return testbin.Path(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	realbmad.Cleanup()
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

// exitCode is the exit code of c, run with the result err (0 when err is
// nil); a command that could not run fails the test.
func exitCode(t testing.TB, c *exec.Cmd, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("%v: %v", c.Args, err)
	}
	return 0
}
