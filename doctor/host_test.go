package doctor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/hosts/hoststest"
	"github.com/story-automator/story-automator/workflows"
)

func fakeHost(t *testing.T, answer func(op string) hoststest.Reply) *hosts.Host {
	t.Helper()
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply { return answer(hoststest.Op(argv)) }}
	h, err := hosts.New(workflows.Host{Name: "big", SSH: "me@big", Dir: "/w"},
		hosts.Options{ControlDir: filepath.Join(t.TempDir(), "ctl"), Exec: fake})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// An unreachable host is one failed check with the code and action.
func TestRunHostUnreachable(t *testing.T) {
	h := fakeHost(t, func(string) hoststest.Reply {
		return hoststest.Reply{Exit: 255, Stderr: "ssh: connect to host big port 22: Connection refused"}
	})
	rep := RunHost(context.Background(), HostOptions{Host: h, Version: "v1"})
	f := rep.Fields()
	if rep.OK || len(rep.Checks) != 1 || rep.Checks[0].Name != "ssh" || f["error"] != hosts.CodeUnreachable ||
		!strings.Contains(f["action"].(string), "ssh me@big true") || f["host"] != "big" {
		t.Fatalf("report %+v fields %v", rep, f)
	}
}

// A host with another version is refused before its agents are asked.
func TestRunHostRefusesAnotherVersion(t *testing.T) {
	probe := "@@story-automator-probe uname 0\nLinux x86_64\n@@story-automator-probe tmux 0\ntmux 3.4\n" +
		"@@story-automator-probe git 0\ngit version 2.43.0\n@@story-automator-probe disk 0\nh\n/dev/x 1 1 99999999 1% /\n" +
		"@@story-automator-probe version 0\nstory-automator v0.9\n@@story-automator-probe files 0\nstory-automator\n"
	h := fakeHost(t, func(op string) hoststest.Reply {
		if op == "check" || op == "master" {
			return hoststest.Reply{}
		}
		return hoststest.Reply{Stdout: probe}
	})
	rep := RunHost(context.Background(), HostOptions{Host: h, Version: "v1.0"})
	f := rep.Fields()
	if rep.OK || f["error"] != CodeHostVersionMismatch || f["action"] != "story-automator hosts install big" || rep.RoundTrips != 1 {
		t.Fatalf("fields %v", f)
	}
	for _, c := range rep.Checks {
		if c.Name == "agents" || c.Host != "big" {
			t.Fatalf("check %+v", c)
		}
	}
}

// The host-key check reads what `ssh -G` says for the host's own ssh
// command, after this tool's options: on, trust on first use, or off.
func TestHostKeyCheckReadsSSHsEffectiveSettings(t *testing.T) {
	for settings, want := range map[string]string{
		"stricthostkeychecking true\nuserknownhostsfile /h/.ssh/known_hosts /h/.ssh/known_hosts2\nglobalknownhostsfile /etc/ssh/ssh_known_hosts\n": "ok checked: StrictHostKeyChecking true (with BatchMode an unknown or changed key is refused); known hosts: /h/.ssh/known_hosts /h/.ssh/known_hosts2 /etc/ssh/ssh_known_hosts",
		"stricthostkeychecking ask\nuserknownhostsfile /k\nglobalknownhostsfile /dev/null\n":                                                       "ok checked: StrictHostKeyChecking ask",
		"stricthostkeychecking false\nuserknownhostsfile /dev/null\nglobalknownhostsfile /dev/null\n":                                              "warn checking OFF: ssh accepts any key for me@big",
		"stricthostkeychecking accept-new\nuserknownhostsfile /dev/null\n":                                                                         "warn checking OFF: no known-hosts file",
		"stricthostkeychecking accept-new\nuserknownhostsfile /k\n":                                                                                "warn a new host's key is trusted unseen",
		"stricthostkeychecking true\nuserknownhostsfile /dev/null\nglobalknownhostsfile /dev/null\n":                                               "warn no known-hosts file",
		"": "warn ssh -G did not say",
	} {
		var argv []string
		fake := &hoststest.Executor{Answer: func(a []string, _ []byte) hoststest.Reply {
			argv = a
			return hoststest.Reply{Stdout: settings}
		}}
		h, err := hosts.New(workflows.Host{Name: "big", SSH: "me@big", Dir: "/w", SSHCommand: "ssh -F /home/me/.ssh/big"},
			hosts.Options{ControlDir: filepath.Join(t.TempDir(), "ctl"), Exec: fake})
		if err != nil {
			t.Fatal(err)
		}
		c := hostKeyCheck(context.Background(), h)
		if got := c.Status + " " + c.Detail; !strings.HasPrefix(got, want) {
			t.Errorf("%q: %q, want %q…", settings, got, want)
		}
		if strings.Join(argv, " ") != "ssh -F /home/me/.ssh/big -o BatchMode=yes -G -- me@big" {
			t.Errorf("ran %q", argv)
		}
		if c.Status == Warn && strings.Contains(c.Detail, "OFF") && !strings.Contains(c.Fix, "StrictHostKeyChecking yes") {
			t.Errorf("no fix: %+v", c)
		}
	}
}
