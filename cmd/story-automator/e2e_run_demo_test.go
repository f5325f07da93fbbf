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
// fast simulated steps and the given behaviour of the simulated worker; it
// returns the output, the exit code and the state document the script names.
func demo(t *testing.T, worker string) (string, int, string) {
	t.Helper()
	tmuxtest.Require(t)
	script, err := filepath.Abs("../../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command("bash", script)
	c.Env = cleanEnv("STORY_AUTOMATOR_BIN="+builtBinary(t), "TMPDIR="+t.TempDir(), "STORY_AUTOMATOR_SIM_DELAY=10ms",
		"DEMO_BACKOFF=10ms", "DEMO_WORKER="+worker)
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
	out, code, doc := demo(t, "followup")
	if code != 0 {
		t.Fatalf("demo exited %d:\n%s", code, out)
	}
	st, err := orchestrator.LoadState(doc)
	if err != nil || st.Status != orchestrator.RunDone {
		t.Fatalf("state document %s: %v %+v", doc, err, st)
	}
	// The build-auto pipeline: a follow-up review of every story, each story's spec.
	for _, u := range st.Units {
		if r := u.Step(orchestrator.StepReview); u.Kind == orchestrator.KindStory && (r == nil || r.Status != orchestrator.StatusVerified) {
			t.Errorf("story %s's follow-up review: %+v", u.Dotted, r)
		}
	}
	for _, want := range []string{"Pipeline: build-auto", "1-4-farewell: ", "spec-1-4-farewell.md", "epic 1: retrospective", "wave 2"} {
		if !strings.Contains(out, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out)
		}
	}
}

func TestE2EDemoScriptSaysWhereTheStateIsWhenTheRunPauses(t *testing.T) {
	t.Parallel()
	out, code, doc := demo(t, "blocked=no subagents")
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

// On a terminal (a tmux pane), with a git config that colours everything
// and names a pager, the demo colours nothing under NO_COLOR and never opens
// the pager; without NO_COLOR the same pane shows escape sequences (so the
// capture would see any).
func TestE2EDemoScriptOnATerminalHonoursNoColorAndOpensNoPager(t *testing.T) {
	t.Parallel()
	socket := tmuxtest.Socket(t)
	script, err := filepath.Abs("../../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paged := filepath.Join(dir, "paged")
	gitConfig := filepath.Join(dir, "gitconfig")
	config := "[color]\n\tui = always\n\tdiff = always\n[core]\n\tpager = touch " + paged + "; cat\n" +
		"[user]\n\tname = demo\n\temail = demo@example.invalid\n"
	if err := os.WriteFile(gitConfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	screens := map[string]string{}
	for _, noColor := range []string{"1", ""} {
		name := "demo-nocolor-" + map[string]string{"1": "set", "": "unset"}[noColor]
		wrapper := filepath.Join(dir, name+".sh")
		body := fmt.Sprintf("export STORY_AUTOMATOR_BIN=%q TMPDIR=%q STORY_AUTOMATOR_SIM_DELAY=10ms DEMO_BACKOFF=10ms GIT_CONFIG_GLOBAL=%q NO_COLOR=%q\n"+
			"[ -n \"$NO_COLOR\" ] || unset NO_COLOR\nbash %q\ntmux -L %q wait-for -S %s\n",
			builtBinary(t), t.TempDir(), gitConfig, noColor, script, socket, name)
		if err := os.WriteFile(wrapper, []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("tmux", "-L", socket, "new-session", "-d", "-s", name, "-x", "160", "-y", "50", "bash "+wrapper+"; sleep 600").CombinedOutput(); err != nil {
			t.Fatalf("new-session: %v\n%s", err, out)
		}
		if out, err := exec.Command("tmux", "-L", socket, "wait-for", name).CombinedOutput(); err != nil {
			t.Fatalf("wait-for: %v\n%s", err, out)
		}
		out, err := exec.Command("tmux", "-L", socket, "capture-pane", "-p", "-e", "-S", "-", "-t", name).Output()
		if err != nil {
			t.Fatal(err)
		}
		screens[noColor] = string(out)
	}
	if !strings.Contains(screens["1"], "git log --oneline") || strings.Contains(screens["1"], "\x1b[") {
		t.Errorf("under NO_COLOR the pane shows escape sequences (or not the demo):\n%q", screens["1"])
	}
	if !strings.Contains(screens[""], "\x1b[") {
		t.Errorf("without NO_COLOR the pane shows no escape sequence: the check sees nothing:\n%s", screens[""])
	}
	if fileExists(paged) {
		t.Error("the demo opened git's pager")
	}
}
