package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/internal/testing/testbin"
	"github.com/story-automator/story-automator/stophook"
)

// hookBinaries are the two programs that run the Stop hook: the main
// binary's stop-hook and story-automator-hook.
func hookBinaries(t *testing.T) map[string][]string {
	return map[string][]string{
		"stop-hook":            {builtBinary(t), "stop-hook"},
		"story-automator-hook": {testbin.HookPath(t)},
	}
}

// runHook runs argv (then args) in root with stdin; it returns stdout,
// stderr and the exit code.
func runHook(t *testing.T, argv []string, root, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runHookEnv(t, append(append([]string{}, argv...), args...), root, stdin)
}

// runHookEnv is runHook with env added to the hook's environment.
func runHookEnv(t *testing.T, argv []string, root, stdin string, env ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Env = cleanEnv(append([]string{"PROJECT_ROOT=" + root}, env...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := exitCode(t, cmd, err)
	return out.String(), errb.String(), code
}

// story-automator-hook decides as stop-hook does: the owner blocked, a
// bystander and a project without a marker let through.
func TestHookBinaryDecidesAsStopHook(t *testing.T) {
	for name, argv := range hookBinaries(t) {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if out, _, code := runHook(t, argv, root, `{"session_id":"owner","stop_hook_active":true}`); out != "" || code != 0 {
				t.Fatalf("no marker: %q %d", out, code)
			}
			ownedMarker(t, root)
			if out, _, code := runHook(t, argv, root, `{"session_id":"other","stop_hook_active":true}`); out != "" || code != 0 {
				t.Fatalf("bystander: %q %d", out, code)
			}
			out, _, code := runHook(t, argv, root, `{"session_id":"owner","stop_hook_active":true}`)
			if obj := assertEmptyOrOneObject(t, out); code != 0 || obj == nil || obj["decision"] != "block" {
				t.Fatalf("owner: %q %d", out, code)
			}
		})
	}
}

// Neither program guards with a marker of a version it does not know: the
// stop proceeds, a warning says why, and the marker is left as it is.
func TestHookBinariesRefuseAnUnknownMarkerVersion(t *testing.T) {
	for name, argv := range hookBinaries(t) {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			ownedMarker(t, root)
			path := filepath.Join(root, ".claude", ".story-automator-active")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			future := bytes.Replace(b, []byte(`"version": 1`), []byte(`"version": 99`), 1)
			if bytes.Equal(future, b) {
				t.Fatalf("no version field to change in %s", b)
			}
			if err := os.WriteFile(path, future, 0o600); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := runHook(t, argv, root, `{"session_id":"owner","stop_hook_active":true}`)
			if out != "" || code != 0 || !strings.Contains(stderr, "version") || !strings.Contains(stderr, "99") {
				t.Fatalf("stdout %q, exit %d, stderr %q", out, code, stderr)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, future) {
				t.Fatalf("the marker was rewritten:\n%s", after)
			}
		})
	}
}

// Whatever goes wrong around story-automator-hook it exits 0 and prints no
// stdout, as stop-hook (TestHookProcessNeverFailsOnItsOwnProblems).
func TestHookBinaryNeverFailsOnItsOwnProblems(t *testing.T) {
	root := t.TempDir()
	ownedMarker(t, root)
	hook := []string{testbin.HookPath(t)}
	for name, args := range map[string][]string{
		"bad log level":  {"--log-level", "bogus"},
		"unwritable log": {"--log-file", "/nonexistent/dir/log"},
		"unknown flag":   {"--frobnicate", "stop-hook", "--also-bad"},
		"bad input":      {"--project-root", root},
	} {
		t.Run(name, func(t *testing.T) {
			out, _, code := runHook(t, hook, root, `{"session_id": "owner", `, args...)
			if out != "" || code != 0 {
				t.Fatalf("stdout %q, exit %d", out, code)
			}
		})
	}
}

// Both programs report the same version; --help answers without reading stdin.
func TestHookBinaryVersionAndHelp(t *testing.T) {
	main, _, _ := runHook(t, []string{builtBinary(t)}, t.TempDir(), "", "--version")
	hook, _, code := runHook(t, []string{testbin.HookPath(t)}, t.TempDir(), "", "--version")
	v, ok := strings.CutPrefix(strings.TrimSpace(main), "story-automator ")
	if !ok || code != 0 || strings.TrimSpace(hook) != "story-automator-hook "+v {
		t.Fatalf("versions %q and %q", main, hook)
	}
	cmd := exec.Command(testbin.HookPath(t), "--help")
	cmd.Stdin = blockingPipe(t)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "Always exits 0") {
		t.Fatalf("%v %q", err, out)
	}
}

// blockingPipe is a stdin that never ends: a program reading it would hang.
func blockingPipe(t *testing.T) *os.File {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r
}

// The hook reads the global flags leniently by its own table, which must be
// the main binary's.
func TestHookReadsTheMainBinarysGlobalFlags(t *testing.T) {
	if got := cliapp.FlagTable(globalFlags()); !maps.Equal(got, stophook.GlobalFlags) {
		t.Fatalf("main binary's globals %v, the hook's %v", got, stophook.GlobalFlags)
	}
}

// hooks install writes the hook binary beside the main one when there is
// one (the fallback, stop-hook, is what the other install tests see).
func TestHooksInstallPointsAtTheHookBinaryBesideIt(t *testing.T) {
	f := newHooksFixture(t)
	hook := filepath.Join(filepath.Dir(f.exe), stophook.BinaryName)
	writeExe(t, hook)
	res, code := f.run(t, "hooks", "install")
	if code != 0 || res["command"] != `"`+hook+`"` {
		t.Fatalf("exit %d, %v", code, res)
	}
	if got := mustRead(t, filepath.Join(f.root, ".claude", "settings.json")); !strings.Contains(got, stophook.BinaryName) {
		t.Fatalf("settings:\n%s", got)
	}
}
