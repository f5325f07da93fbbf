package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/internal/testing/sshd"
)

// sshProject is a project whose workflow names the test's sshd as host
// "box", with its own sshCommand (else STORY_AUTOMATOR_SSH_COMMAND must say it).
func sshProject(t *testing.T, srv *sshd.Server, ownCommand bool) string {
	t.Helper()
	// A short root: the control sockets live in its .story-automator/ssh.
	root, err := os.MkdirTemp("", "sa-p-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	wf := "hosts:\n  - name: box\n    ssh: " + sshd.Alias + "\n    dir: " + srv.WorkDir + "\n    agents: [sim]\n"
	if ownCommand {
		wf += "    sshCommand: " + srv.SSHCommand() + "\n"
	}
	if err := os.MkdirAll(filepath.Join(root, ".story-automator"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".story-automator", "workflow.yaml"), []byte(wf), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// runIn runs the built binary in root and decodes its JSON; env adds to
// the test's environment.
func runIn(t *testing.T, root string, env []string, args ...string) (map[string]any, int) {
	t.Helper()
	c := exec.Command(builtBinary(t), args...)
	c.Env = cleanEnv(append([]string{"HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}, env...)...)
	c.Dir = root
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	var v map[string]any
	if jerr := json.Unmarshal(out.Bytes(), &v); jerr != nil {
		t.Fatalf("%v: output %q, stderr %q: %v", args, out.String(), errOut.String(), jerr)
	}
	return v, code
}

func hostCheck(rep map[string]any, name string) string {
	checks, _ := rep["checks"].([]any)
	for _, c := range checks {
		m := c.(map[string]any)
		if m["name"] == name {
			return m["status"].(string) + " " + m["detail"].(string)
		}
	}
	return ""
}

// A host without story-automator is refused with the install command;
// after `hosts install`, doctor --host passes (tmux, git, the same
// version, the host's own doctor rehearsing sim in the host's tmux) in
// three round trips; a second install copies nothing.
func TestHostsInstallThenDoctorHost(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	root := sshProject(t, srv, true)

	rep, code := runIn(t, root, nil, "doctor", "--host", "box", "--json", "--no-rehearsal")
	if code != 1 || rep["error"] != "host_not_installed" || rep["action"] != "story-automator hosts install box" {
		t.Fatalf("before install: exit %d %v", code, rep)
	}

	inst, code := runIn(t, root, nil, "hosts", "install", "box", "--json")
	local, err := exec.Command(builtBinary(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimPrefix(strings.TrimSpace(string(local)), "story-automator ")
	if code != 0 || inst["version"] != want || len(inst["copied"].([]any)) != 2 {
		t.Fatalf("install: exit %d %v (want version %q)", code, inst, want)
	}
	for _, p := range []string{"story-automator", "story-automator-hook"} {
		if fi, err := os.Stat(filepath.Join(srv.WorkDir, "bin", p)); err != nil || fi.Mode()&0o111 == 0 {
			t.Fatalf("%s on the host: %v", p, err)
		}
	}

	rep, code = runIn(t, root, nil, "doctor", "--host", "box", "--json")
	if code != 0 || rep["ok"] != true {
		t.Fatalf("after install: exit %d %v", code, rep)
	}
	for name, prefix := range map[string]string{"tmux": "ok tmux ", "git": "ok git version", "story-automator": "ok " + want,
		"rehearsal": "ok one turn in tmux", "agents": "ok ready on box: sim", "host key": "ok "} {
		if got := hostCheck(rep, name); !strings.HasPrefix(got, prefix) {
			t.Errorf("check %s = %q, want %q…", name, got, prefix)
		}
	}
	if rep["roundTrips"] != float64(3) {
		t.Errorf("doctor --host took %v round trips, want 3 (connect, probe, the host's doctor)", rep["roundTrips"])
	}
	if n := srv.Accepted(); n != 3 {
		t.Errorf("sshd accepted %d connections for 3 commands, want one each", n)
	}

	again, code := runIn(t, root, nil, "hosts", "install", "box", "--json")
	if code != 0 || again["current"] != true || len(again["copied"].([]any)) != 0 {
		t.Fatalf("second install: exit %d %v", code, again)
	}
	if left, _ := filepath.Glob(filepath.Join(srv.WorkDir, "bin", ".install.*")); len(left) > 0 {
		t.Fatalf("install left %v", left)
	}
	// Each command closed its connection: no control socket is left.
	ctl := filepath.Join(root, ".story-automator", "ssh")
	if hosts.ControlDir(filepath.Join(root, ".story-automator")) != ctl {
		t.Fatalf("the control sockets are not under the project: %s", hosts.ControlDir(filepath.Join(root, ".story-automator")))
	}
	entries, err := os.ReadDir(ctl)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left in %s: %s", ctl, e.Name())
		}
	}
}

// A host whose story-automator reports another version is refused with the
// install command; the host is reached through STORY_AUTOMATOR_SSH_COMMAND,
// which hosts list shows.
func TestDoctorHostRefusesAnotherVersion(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	root := sshProject(t, srv, false)
	env := []string{"STORY_AUTOMATOR_SSH_COMMAND=" + srv.SSHCommand()}
	list, code := runIn(t, root, env, "hosts", "list", "--json")
	hl, _ := list["hosts"].([]any)
	if code != 0 || len(hl) != 2 || hl[0].(map[string]any)["name"] != "local" || hl[1].(map[string]any)["sshCommand"] != srv.SSHCommand() {
		t.Fatalf("hosts list: exit %d %v", code, list)
	}
	bin := filepath.Join(srv.WorkDir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := "#!/bin/sh\necho 'story-automator v0.0.1-elsewhere go1.20'\n"
	if err := os.WriteFile(filepath.Join(bin, "story-automator"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, code := runIn(t, root, env, "doctor", "--host", "box", "--json", "--no-rehearsal")
	if code != 1 || rep["error"] != "host_version_mismatch" || rep["action"] != "story-automator hosts install box" ||
		!strings.Contains(rep["message"].(string), "v0.0.1-elsewhere go1.20") {
		t.Fatalf("exit %d %v", code, rep)
	}
	if got := hostCheck(rep, "agents"); got != "" {
		t.Fatalf("the agents were checked with a mismatched binary: %s", got)
	}
}

// An unknown host key stops doctor --host at that check, with the way to
// trust the key.
func TestDoctorHostRefusesAnUnknownHostKey(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	if err := os.WriteFile(srv.KnownHosts, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, code := runIn(t, sshProject(t, srv, true), nil, "doctor", "--host", "box", "--json")
	action, _ := rep["action"].(string)
	if code != 1 || rep["error"] != "host_key_unknown" || !strings.Contains(action, srv.SSHCommand()+" "+sshd.Alias) ||
		!strings.HasPrefix(hostCheck(rep, "host key"), "fail ") {
		t.Fatalf("exit %d %v", code, rep)
	}
}
