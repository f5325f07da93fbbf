package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/workflows/sample"
)

// sampleRoot is the sample project without git.
func sampleRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := sample.WriteSample(root); err != nil {
		t.Fatal(err)
	}
	return root
}

// runInProcess runs the CLI in-process on root, pointed at a tmux socket
// that has no server, so nothing ever reaches the user's tmux.
func runInProcess(t *testing.T, root string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	socket := fmt.Sprintf("sa-test-none-%d", os.Getpid())
	code := Run(append([]string{"--project-root", root, "--tmux-socket", socket}, args...), testStreams(root, &out))
	return out.String(), code
}

func TestRunRefusesBadFlagsAsUsageErrors(t *testing.T) {
	root := sampleRoot(t)
	for _, args := range [][]string{
		{"run", "--parallel", "0"},
		{"run", "--agent", "custom"},
		{"run", "--fallback-agent", "vim"},
		{"run", "--resume", "--epic", "1"},
		{"run", "--max-cycles", "0"},
		{"run", "extra-argument"},
	} {
		out, code := runInProcess(t, root, args...)
		if code != 2 || !strings.Contains(out, `"error":"usage_error"`) {
			t.Fatalf("%v: exit %d, %s", args, code, out)
		}
	}
}

func TestRunDryRunPrintsThePlanInTextOrJSON(t *testing.T) {
	root := sampleRoot(t)
	out, code := runInProcess(t, root, "run", "--agent", "sim", "--dry-run", "--stories", "1-2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"Plan (dry run): 2 stories to do", "1.1", "Greet by Name", "(after 1-1)", "wave 2: 1.2"} {
		if !strings.Contains(out, want) {
			t.Fatalf("plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "epic 1") {
		t.Fatalf("a run of 1.1–1.2 does not end the epic, yet plans its retro:\n%s", out)
	}
	out, _ = runInProcess(t, root, "run", "--agent", "sim", "--dry-run", "--json", "--stories", "9")
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil || res["ok"] != false || res["error"] == "" {
		t.Fatalf("an unknown story: %s", out)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude")); err == nil {
		t.Fatal("a dry run created the marker directory")
	}
}

// The plan shows the hosts the run would use, what a limit does and the
// policy's warnings (an allowed registry takes uploads), in text and JSON.
func TestRunDryRunShowsHostsLimitPolicyAndWarnings(t *testing.T) {
	root := sampleRoot(t)
	policy := filepath.Join(root, ".story-automator", "workflow.yaml")
	f, err := os.OpenFile(policy, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("hosts:\n  - {name: big, ssh: me@big.example.com, dir: /srv/sa, parallel: 3, agents: [sim]}\n" +
		"onLimit: wait\nmaxWait: 2h\nsandbox: {network: [registry.npmjs.org]}\n")
	if cerr := f.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	out, code := runInProcess(t, root, "run", "--agent", "sim", "--dry-run", "--stories", "1-2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"hosts: local (1 at once), big (3 at once; sim)", "on a usage or rate limit: wait; wait at most 2h0m0s",
		"warning: sandbox.network lets a confined child reach registry.npmjs.org", "accepts uploads"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	out, code = runInProcess(t, root, "run", "--agent", "sim", "--dry-run", "--json", "--stories", "1-2", "--max-wait", "30m", "--host", "big")
	var res struct {
		Hosts    []map[string]any `json:"hosts"`
		OnLimit  string           `json:"onLimit"`
		MaxWait  string           `json:"maxWait"`
		Warnings []string         `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("exit %d %v: %s", code, err, out)
	}
	if len(res.Hosts) != 2 || res.Hosts[0]["parallel"] != float64(0) || res.Hosts[1]["name"] != "big" ||
		res.Hosts[1]["parallel"] != float64(3) || res.OnLimit != "wait" || res.MaxWait != "30m0s" || len(res.Warnings) != 1 {
		t.Fatalf("%+v", res)
	}
}

func TestRunOutsideGitOrWithUncommittedChangesIsRefused(t *testing.T) {
	root := sampleRoot(t)
	out, code := runInProcess(t, root, "run", "--agent", "sim")
	if code != 1 || !strings.Contains(out, `"error":"not_a_git_repo"`) {
		t.Fatalf("outside git: exit %d %s", code, out)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	out, code = runInProcess(t, root, "run", "--agent", "sim")
	if code != 1 || !strings.Contains(out, `"error":"worktree_dirty"`) || !strings.Contains(out, "commit or stash") {
		t.Fatalf("uncommitted sample: exit %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude", ".story-automator-active")); err == nil {
		t.Fatal("a refused run left a marker")
	}
}

func TestRunWithoutABMADProjectFails(t *testing.T) {
	out, code := runInProcess(t, t.TempDir(), "run", "--agent", "sim", "--dry-run")
	if code != 1 || !strings.Contains(out, `"ok":false`) {
		t.Fatalf("exit %d: %s", code, out)
	}
}
