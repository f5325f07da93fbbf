package hosts_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/hosts/hoststest"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/workflows"
)

func touch(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Another system's binaries come from make dist's names; this system's may
// be this binary and the programs beside it; no main binary is an error
// with the way to build one.
func TestBinariesForAPlatform(t *testing.T) {
	here := t.TempDir()
	exe := filepath.Join(here, "story-automator")
	touch(t, exe, filepath.Join(here, "story-automator-hook"))
	root := t.TempDir()
	dist := filepath.Join(root, "dist")
	touch(t, filepath.Join(dist, "story-automator-plan9-arm64"), filepath.Join(dist, "story-automator-hook-plan9-arm64"))

	bins, err := hosts.Binaries("plan9/arm64", "", exe, root)
	if err != nil || len(bins) != 2 || bins[0].Path != filepath.Join(dist, "story-automator-plan9-arm64") || bins[1].Name != "story-automator-hook" {
		t.Fatalf("dist: %+v %v", bins, err)
	}
	native := runtime.GOOS + "/" + runtime.GOARCH
	bins, err = hosts.Binaries(native, "", exe, root)
	if err != nil || len(bins) != 2 || bins[0].Path != exe || bins[1].Path != filepath.Join(here, "story-automator-hook") {
		t.Fatalf("native: %+v %v", bins, err)
	}
	_, err = hosts.Binaries("plan9/arm64", t.TempDir(), exe, root)
	var ce *coded.Error
	if !errors.As(err, &ce) || ce.Code != hosts.CodeNoBinary || !strings.Contains(ce.Action, "make dist") {
		t.Fatalf("missing: %v", err)
	}
}

// One probe command tells platform, tools, disk and the installed version.
func TestFactsFromOneCommand(t *testing.T) {
	out := "@@story-automator-probe uname 0\nLinux aarch64\n@@story-automator-probe tmux 0\ntmux 3.4\n" +
		"@@story-automator-probe git 127\nsh: git: not found\n" +
		"@@story-automator-probe disk 0\nFilesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 100 50 2048 50% /\n" +
		"@@story-automator-probe version 0\nstory-automator v1.2.3 go1.26.8\n" +
		"@@story-automator-probe files 0\nstory-automator\nstory-automator-hook\n"
	fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
		if op := hoststest.Op(argv); op == "check" || op == "master" {
			return hoststest.Reply{}
		}
		return hoststest.Reply{Stdout: out}
	}}
	h, err := hosts.New(workflows.Host{Name: "big", SSH: "big", Dir: "/srv/my sa"},
		hosts.Options{ControlDir: filepath.Join(t.TempDir(), "ctl"), Exec: fake})
	if err != nil {
		t.Fatal(err)
	}
	f, err := h.Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f.Platform() != "linux/arm64" || f.Tmux.Output != "tmux 3.4" || f.Git.OK() || f.FreeKiB() != 2048 ||
		f.InstalledVersion() != "v1.2.3 go1.26.8" || !f.HasPrograms() {
		t.Fatalf("facts %+v", f)
	}
	calls := fake.Calls()
	last := calls[len(calls)-1]
	words, err := shellword.Split(last[len(last)-1])
	if err != nil || len(words) != 3 || !slices.Equal(words[:2], []string{"sh", "-c"}) ||
		!strings.Contains(words[2], "probe version '/srv/my sa/bin/story-automator' --version") {
		t.Errorf("the probe command: %q (%v)", words, err)
	}
	if h.Stats().Commands != 1 {
		t.Errorf("stats %+v", h.Stats())
	}
}

// A control socket directory others may enter is refused: a socket put
// there could pose as the host's connection.
func TestConnectRefusesAnOpenControlDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ctl")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	h, err := hosts.New(workflows.Host{Name: "big", SSH: "big", Dir: "/w"}, hosts.Options{ControlDir: dir, Exec: &hoststest.Executor{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Fatalf("err = %v", err)
	}
}
