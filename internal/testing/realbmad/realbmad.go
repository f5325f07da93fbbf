// Package realbmad makes BMAD projects with the real, pinned BMAD installer
// (tools/bmad) for tests, and runs BMAD's own Python scripts through the
// pinned uv as BMAD's skills run them. A project is installed once per test
// binary and copied for each test that asks for one; nothing of BMAD's own
// files is kept in this repository.
package realbmad

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/story-automator/story-automator/internal/testtier"
)

// InstallCommand is what a developer runs to get the pinned BMAD and uv.
const InstallCommand = "scripts/install-bmad.sh"

// Version is the BMAD release tools/bmad pins.
const Version = "6.12.0"

// Tools are the folders the projects are installed for (bmad install --tools).
const Tools = "claude-code,codex,gemini"

// Dir is where scripts/install-bmad.sh installs: $STORY_AUTOMATOR_BMAD_DIR,
// by default under the user's cache.
func Dir() string {
	if dir := os.Getenv("STORY_AUTOMATOR_BMAD_DIR"); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "story-automator", "bmad")
}

// Installed is the pinned BMAD installer and uv, as scripts/install-bmad.sh
// leaves them.
type Installed struct {
	// BMAD and UV are the commands' paths.
	BMAD, UV string
	// Wheels holds the dependency of BMAD's own Python scripts (ruamel.yaml).
	Wheels string
}

// Find returns the pinned install; ok is false when a part of it is missing.
func Find() (Installed, bool) {
	d := Dir()
	if d == "" {
		return Installed{}, false
	}
	in := Installed{BMAD: filepath.Join(d, "bin", "bmad"), UV: filepath.Join(d, "bin", "uv"), Wheels: filepath.Join(d, "wheels")}
	for _, p := range []string{in.BMAD, in.UV, in.Wheels} {
		if _, err := os.Stat(p); err != nil {
			return Installed{}, false
		}
	}
	return in, true
}

// Require returns the pinned install. When it is missing the test is skipped
// with one loud line naming the install command — or failed when CI=true,
// where .ci/run installs it and a skip would hide a gap. Under -short the test
// is skipped: it is an integration test.
func Require(t testing.TB) Installed {
	t.Helper()
	testtier.Integration(t)
	if in, ok := Find(); ok {
		return in
	}
	msg := "REAL BMAD MISSING: bmad-method " + Version + " and uv are not installed under " + Dir() +
		"; run " + InstallCommand + " (needs npm and python3) to run this test"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return Installed{}
}

// ScriptEnv is the environment BMAD's Python scripts run in under `uv run`
// in a test: the pinned wheels instead of an index, no download of a Python.
func (in Installed) ScriptEnv() []string {
	return append(os.Environ(), "UV_FIND_LINKS="+in.Wheels, "UV_OFFLINE=1", "UV_PYTHON_DOWNLOADS=never", "UV_NO_CACHE=1")
}

// RunScript runs one of BMAD's Python scripts (a path inside dir) as BMAD's
// skills do, `uv run --no-cache SCRIPT ARGS…`, in dir, and returns its stdout.
// The test fails when it cannot start or exits non-zero.
func (in Installed) RunScript(t testing.TB, dir, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command(in.UV, append([]string{"run", "--no-cache", script}, args...)...)
	cmd.Dir, cmd.Env = dir, in.ScriptEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("uv run %s %s: %v\nstdout: %s\nstderr: %s", script, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

var (
	once     sync.Once
	template string
	made     error
)

// Project returns a fresh BMAD project of its own for the test: a git
// repository whose one commit holds what `bmad install --directory DIR
// --modules bmm --tools claude-code,codex,gemini --yes` wrote. The install
// runs once per test binary; each call copies it.
func Project(t testing.TB) string {
	t.Helper()
	in := Require(t)
	once.Do(func() { template, made = install(in) })
	if made != nil {
		t.Fatalf("make a BMAD %s project: %v", Version, made)
	}
	dst := filepath.Join(t.TempDir(), "project")
	if out, err := exec.Command("cp", "-a", template, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy the BMAD project: %v\n%s", err, out)
	}
	return dst
}

// install makes the template project in a folder of its own.
func install(in Installed) (string, error) {
	parent, err := os.MkdirTemp("", "realbmad-")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(parent, "project")
	if err := os.Mkdir(dir, 0o750); err != nil {
		return "", err
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append([]string{"-c", "user.name=realbmad", "-c", "user.email=realbmad@example.invalid",
			"-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := git("init", "-q"); err != nil {
		return "", err
	}
	cmd := exec.Command(in.BMAD, "install", "--directory", dir, "--modules", "bmm", "--tools", Tools, "--yes")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bmad install: %w\n%s", err, out)
	}
	if err := git("add", "-A"); err != nil {
		return "", err
	}
	if err := git("commit", "-q", "-m", "BMAD "+Version); err != nil {
		return "", err
	}
	return dir, nil
}

// Cleanup removes the installed template; call it from TestMain after m.Run.
func Cleanup() {
	if template != "" {
		os.RemoveAll(filepath.Dir(template))
	}
}
