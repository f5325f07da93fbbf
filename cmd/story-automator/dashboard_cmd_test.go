package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/story-automator/story-automator/tmux/tmuxtest"
)

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
