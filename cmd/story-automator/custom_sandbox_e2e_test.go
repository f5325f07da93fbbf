package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/internal/testtier"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// A custom command has no sandbox of its own: confined by default, it
// runs inside this tool's, and the sandbox tests' hostile command (model
// -sim's escape, run as the command itself) writes its story's folder and
// nothing else (not next to the project, not HOME, not the host's /tmp,
// not the repository's hooks) and connects nowhere.
func TestE2ECustomCommandIsHeldByThisToolsSandbox(t *testing.T) {
	t.Parallel()
	h := customEscape(t)
	out := h.output
	if !strings.Contains(out, "INSIDE-OK") {
		t.Fatalf("the confined command could not write its own folder:\n%s", out)
	}
	if !strings.Contains(out, "DENIED write "+h.home) || !strings.Contains(out, "DENIED write .git/hooks/") {
		t.Fatalf("the escape was not tried, or its denial is invisible:\n%s", out)
	}
	for _, f := range h.targets {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("the confined command wrote %s outside its story", f)
		}
	}
	if n := h.connections.Load(); n != 0 {
		t.Errorf("the listener saw %d connection(s) from a confined command", n)
	}
}

// The control that proves the test can fail: with --sandbox off the same
// command's writes land and its connection arrives.
func TestE2ECustomCommandSandboxOffLetsTheEscapeThrough(t *testing.T) {
	t.Parallel()
	h := customEscape(t, "--sandbox", "off")
	for _, f := range h.targets {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("unconfined, the write to %s should have landed: %v", f, err)
		}
	}
	if h.connections.Load() == 0 {
		t.Error("unconfined, the connection to the loopback listener should have arrived")
	}
}

// customEscapeRun is what one escape by a custom command did.
type customEscapeRun struct {
	home, output string
	targets      []string
	connections  *atomic.Int32
}

// customEscape spawns the escape as a custom command in a git project
// outside the temp dir (with HOME beside it), waits for it to end and
// returns what it printed and the files it would write.
func customEscape(t *testing.T, extra ...string) *customEscapeRun {
	t.Helper()
	testtier.Integration(t)
	if runtime.GOOS == "linux" {
		if _, err := exec.LookPath("bwrap"); err != nil {
			testtier.Missing(t, "bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		testtier.Missing(t, "git is not installed")
	}
	h := &customEscapeRun{connections: &atomic.Int32{}, home: outsideTmp(t, "home")}
	port := listenEverywhere(t, h.connections)
	tag := "sa-escape-custom-" + randomHex(t)
	root := outsideTmp(t, "project")
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	h.targets = append(modelsim.EscapeTargets(root, h.home, tag), filepath.Join(root, ".git", "hooks", tag))
	t.Cleanup(func() {
		for _, f := range h.targets {
			_ = os.Remove(f)
		}
	})
	script := "echo INSIDE-OK > inside.txt && cat inside.txt; " + modelsim.EscapeCommand(modelsim.Escape{
		Loopback: fmt.Sprintf("127.0.0.1:%d", port), Outside: fmt.Sprintf("%s:%d", outsideIP(t), port), Tag: tag})
	p := newSessionProjectAt(t, tmuxtest.Socket(t), root)
	env := []string{"HOME=" + h.home}
	name := p.spawn(env, append([]string{"--agent", "custom", "--command", "bash -c " + shellword.MustQuote(script)}, extra...)...)
	if res, code := p.run(env, "monitor-session", name, "--timeout", "60s"); code != 0 {
		t.Fatalf("monitor: %d %v", code, res)
	}
	b, err := os.ReadFile(sessionstate.OutputPath(p.sessionsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	h.output = string(b)
	return h
}
