package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

// Without its own program beside it, dashboard fails with the way to install it.
func TestE2EDashboardWithoutItsProgramSaysHowToInstallIt(t *testing.T) {
	data, err := os.ReadFile(builtBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(t.TempDir(), "story-automator")
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(alone, "dash")
	c.Env, c.Dir = cleanEnv(), t.TempDir()
	out, _ := c.Output()
	var res map[string]any
	_ = json.Unmarshal(out, &res)
	action, _ := res["action"].(string)
	if c.ProcessState.ExitCode() != 1 || res["error"] != "dashboard_missing" || !strings.Contains(action, "make build") {
		t.Fatalf("dashboard alone = %d %s", c.ProcessState.ExitCode(), out)
	}
}

// Inside tmux, on the run's own server, attach switches the user's client
// to the child's session instead of nesting a tmux in the dashboard.
func TestE2EDashboardInsideTheRunsTmuxSwitchesTheClient(t *testing.T) {
	t.Parallel()
	p := newSessionProject(t, tmuxtest.Socket(t))
	recordedRun(t, p.root, p.socket)
	name := p.spawn(nil, "--agent", "custom", "--command", "sleep 60 {prompt}", "--prompt", "1")
	ui := screens{t: t, socket: p.socket}
	ui.open("dash", p.root, envScript([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, p.bin, "dashboard"))
	client := exec.Command("tmux", "-L", p.socket, "attach-session", "-t", "=dash")
	client.Env = cleanEnv("TERM=xterm-256color")
	tty, err := pty.StartWithSize(client, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Process.Kill(); _ = client.Wait(); tty.Close() })
	go func() { _, _ = io.Copy(io.Discard, tty) }()

	ui.waitScreen("dash", "the dashboard with the interrupted run", contains("● interrupted"))
	ui.tmux("send-keys", "-t", "=dash:", "2", "a")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if got := strings.TrimSpace(ui.tmux("list-clients", "-F", "#{client_session}")); got == name {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the client is on %q, want %s; the dashboard shows:\n%s", got, name, ui.screen("dash"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	ui.waitScreen("dash", "the dashboard still running, saying where the client went", contains("switched to "+name))
}
