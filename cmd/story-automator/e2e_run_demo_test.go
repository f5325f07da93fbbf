package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// demo runs scripts/demo.sh (what `make demo` runs) with the built binary,
// fast simulated steps and the given faults; it returns the output, the exit
// code and the state document the script names.
func demo(t *testing.T, faults string) (string, int, string) {
	t.Helper()
	tmuxtest.Require(t)
	script, err := filepath.Abs("../../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("bash", script)
	c.Env = cleanEnv("STORY_AUTOMATOR_BIN="+builtBinary(t), "TMPDIR="+t.TempDir(), "STORY_AUTOMATOR_SIM_DELAY=10ms",
		"DEMO_BACKOFF=10ms", "DEMO_FAULTS="+faults)
	out, err := c.CombinedOutput()
	// The script's private server is named after its pid; nothing of it may stay.
	if sock := tmux.SocketPath(fmt.Sprintf("sa-demo-%d", c.Process.Pid)); fileExists(sock) {
		t.Errorf("the demo left its tmux socket %s behind", sock)
	}
	code := exitCode(t, c, err)
	m := regexp.MustCompile(`(?m)^state document: (\S+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the demo does not say where the state document is (exit %d):\n%s", code, out)
	}
	return string(out), code, string(m[1])
}

func TestE2EDemoScriptRunsTheSampleToTheEnd(t *testing.T) {
	t.Parallel()
	out, code, doc := demo(t, "crash:dev:1@1-2, review-cycles:2@1-3")
	if code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out)
	}
	st, err := orchestrator.LoadState(doc)
	if err != nil || st.Status != orchestrator.RunDone {
		t.Fatalf("state document %s: %v %+v", doc, err, st)
	}
	for _, want := range []string{"story 1.4", "epic 1: retrospective", "wave 2"} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
}

func TestE2EDemoScriptSaysWhereTheStateIsWhenTheRunPauses(t *testing.T) {
	t.Parallel()
	out, code, doc := demo(t, "crash:create@1-1")
	if code != 1 || !strings.Contains(out, "run --resume") {
		t.Fatalf("demo of an escalating run exited %d:\n%s", code, out)
	}
	if st, err := orchestrator.LoadState(doc); err != nil || st.Escalation == nil {
		t.Fatalf("state document %s: %v", doc, err)
	}
	if _, err := os.Stat(doc); err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
