package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
	"github.com/story-automator/story-automator/workflows"
)

// A custom command has no sandbox of its own: confined by default, it
// runs inside this tool's, and the sandbox tests' hostile command (model
// -sim's escape, run as the command itself) writes its story's folder and
// nothing else (not next to the project, not HOME, not the host's /tmp,
// not the repository's hooks) and connects nowhere.
func TestE2ECustomCommandIsHeldByThisToolsSandbox(t *testing.T) {
	t.Parallel()
	h := customEscape(t, "")
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
	h := customEscape(t, "", "--sandbox", "off")
	for _, f := range h.targets {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("unconfined, the write to %s should have landed: %v", f, err)
		}
	}
	if h.connections.Load() == 0 {
		t.Error("unconfined, the connection to the loopback listener should have arrived")
	}
}

// A confined custom command whose workflow lists a host reaches that host
// through this tool's proxy, and nothing else: the hostile fetch of the
// test's listener (through the same proxy) is refused with 403 and logged,
// its direct connections fail, and the listener sees none of them.
func TestE2ECustomCommandReachesOnlyTheWorkflowsHosts(t *testing.T) {
	t.Parallel()
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ALLOWED-BODY") }))
	defer allowed.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(allowed.URL, "http://"))
	h := customEscape(t, "sandbox:\n  network: [localhost]\n", withFetch("http://localhost:"+port+"/"))
	if !strings.Contains(h.output, "ALLOWED-BODY") {
		t.Fatalf("the workflow's host was not reached through the proxy:\n%s", h.output)
	}
	if !strings.Contains(h.output, "DENIED fetch "+h.fetch) || !strings.Contains(h.output, "DENIED connect 127.0.0.1:") {
		t.Fatalf("the hostile fetch or connect was not tried, or not denied:\n%s", h.output)
	}
	if n := h.connections.Load(); n != 0 {
		t.Errorf("the listener saw %d connection(s) from a confined command", n)
	}
	if !strings.Contains(h.netLog, "refused GET "+strings.TrimSuffix(strings.TrimPrefix(h.fetch, "http://"), "/")) ||
		!strings.Contains(h.netLog, "allowed GET localhost:"+port) {
		t.Errorf("the proxy's log:\n%s", h.netLog)
	}
}

// withFetch makes the custom command fetch url (through the proxy the
// sandbox names) before its escape.
func withFetch(url string) string { return "fetch=" + url }

// customEscapeRun is what one escape by a custom command did.
type customEscapeRun struct {
	home, output, netLog, fetch string
	targets                     []string
	connections                 *atomic.Int32
}

// customEscape spawns the escape as a custom command in a git project
// outside the temp dir (with HOME beside it) whose workflow.yaml is policy
// ("" = none), waits for it to end and returns what it printed, what its
// network proxy logged and the files it would write. An extra argument
// withFetch(url) is a URL the command fetches first; the escape then
// also fetches the listener through the proxy variables.
func customEscape(t *testing.T, policy string, extra ...string) *customEscapeRun {
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
	esc := modelsim.Escape{Loopback: fmt.Sprintf("127.0.0.1:%d", port), Outside: fmt.Sprintf("%s:%d", outsideIP(t), port), Tag: tag}
	script := "echo INSIDE-OK > inside.txt && cat inside.txt; "
	if len(extra) > 0 && strings.HasPrefix(extra[0], "fetch=") {
		script += "curl -sS --max-time 10 " + shellword.MustQuote(strings.TrimPrefix(extra[0], "fetch=")) + "; echo; "
		esc.Fetch = fmt.Sprintf("http://127.0.0.1:%d/", port)
		h.fetch, extra = esc.Fetch, extra[1:]
	}
	script += modelsim.EscapeCommand(esc)
	if policy != "" {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, workflows.PolicyFile)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, workflows.PolicyFile), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
	if log, err := os.ReadFile(child.NetworkLogPath(p.sessionsDir, name)); err == nil {
		h.netLog = string(log)
	}
	return h
}
