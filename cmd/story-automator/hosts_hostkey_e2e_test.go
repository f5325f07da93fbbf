package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/sshd"
)

// A committed workflow.yaml whose sshCommand turns host-key checking off is
// refused before ssh runs: doctor --host and hosts install name the option, and the
// private sshd never saw a connection. The control: the same project with
// the harness's plain sshCommand connects.
func TestHostsAnSSHCommandThatTurnsHostKeyCheckingOffIsRefused(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	root := sshProject(t, srv, false)
	wf := filepath.Join(root, ".story-automator", "workflow.yaml")
	unsafe := "    sshCommand: " + srv.SSHCommand() + " -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null\n"
	appendFile(t, wf, unsafe)
	for _, args := range [][]string{{"doctor", "--host", "box", "--json", "--no-rehearsal"}, {"hosts", "install", "box", "--json"}} {
		res, code := runIn(t, root, nil, args...)
		if code == 0 || res["error"] != "policy_invalid" || !strings.Contains(fmt.Sprint(res["message"]), "StrictHostKeyChecking=no turns host-key checking off") {
			t.Fatalf("%v: exit %d %v, want policy_invalid naming the option", args, code, res)
		}
	}
	if n := srv.Accepted(); n != 0 {
		t.Fatalf("sshd accepted %d connection(s) for a refused sshCommand", n)
	}
	// The control: without the unsafe options the same host is reached.
	if err := os.WriteFile(wf, []byte(strings.Replace(readFile(t, wf), unsafe, "    sshCommand: "+srv.SSHCommand()+"\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _ := runIn(t, root, nil, "doctor", "--host", "box", "--json", "--no-rehearsal")
	if got := hostCheck(rep, "ssh"); !strings.HasPrefix(got, "ok connected") || srv.Accepted() == 0 {
		t.Fatalf("the control did not connect: ssh check %q, %d connection(s)", got, srv.Accepted())
	}
}

// doctor --host reads how ssh checks the host's key from `ssh -G` with the
// run's ssh command: with the harness's ssh config (checking on, its
// known_hosts) it says checked and names the file; with the user's own
// config (STORY_AUTOMATOR_SSH_COMMAND, not the project's) turning checking
// off, it warns that checking is OFF.
func TestHostsDoctorReportsHowSSHChecksTheHostKey(t *testing.T) {
	t.Parallel()
	srv := sshd.Start(t)
	root := sshProject(t, srv, false)
	on := []string{"STORY_AUTOMATOR_SSH_COMMAND=" + srv.SSHCommand()}
	rep, _ := runIn(t, root, on, "doctor", "--host", "box", "--json", "--no-rehearsal")
	if got := hostCheck(rep, "host key"); !strings.HasPrefix(got, "ok checked: StrictHostKeyChecking true") || !strings.Contains(got, srv.KnownHosts) {
		t.Fatalf("checking on: host key %q", got)
	}
	own := filepath.Join(t.TempDir(), "ssh_config")
	cfg := strings.NewReplacer("StrictHostKeyChecking yes", "StrictHostKeyChecking no",
		"UserKnownHostsFile "+srv.KnownHosts, "UserKnownHostsFile /dev/null").Replace(readFile(t, srv.ConfigFile))
	if err := os.WriteFile(own, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	off := []string{"STORY_AUTOMATOR_SSH_COMMAND=ssh -F " + own}
	rep, _ = runIn(t, root, off, "doctor", "--host", "box", "--json", "--no-rehearsal")
	if got := hostCheck(rep, "ssh"); !strings.HasPrefix(got, "ok connected") {
		t.Fatalf("checking off: ssh %q", got)
	}
	if got := hostCheck(rep, "host key"); !strings.HasPrefix(got, "warn checking OFF") {
		t.Fatalf("checking off: host key %q", got)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(readFile(t, path)+text), 0o644); err != nil {
		t.Fatal(err)
	}
}
