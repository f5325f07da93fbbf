package workflows

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/internal/testtier"
)

// requireBwrap fails under CI=true, where bubblewrap must be installed.
func requireBwrap(t *testing.T) {
	t.Helper()
	testtier.Integration(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap is missing: .ci/run installs it (%s)", confine.Install)
		}
		t.Skipf("bwrap is not installed (%s)", confine.Install)
	}
}

// The project's command (its tests, which a child may have written) runs
// with the child's policy: it writes the project and its temp folder,
// nothing outside, not the repository's hooks, and reads none of the
// user's credentials; under `sandbox: off` the same command lands its write.
func TestCommandVerifierRunsTheCommandConfined(t *testing.T) {
	requireBwrap(t)
	p := openProject(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("PRIVATE-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(p.Root, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	outside, err := os.MkdirTemp("/var/tmp", "verify-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	escaped := filepath.Join(outside, "escaped")
	script := strings.Join([]string{
		"echo in > inside",
		"echo tmp > \"$TMPDIR/t\" && echo TMP-OK",
		"echo x > " + escaped + " || echo OUTSIDE-DENIED",
		"echo x > .git/hooks/pre-commit || echo HOOK-DENIED",
		"echo KEY=$(cat ~/.ssh/id_ed25519 2>/dev/null)",
		"true"}, "\n")
	pol := func(doc string) *Policy {
		pol, err := ParsePolicy("test", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		pol.Steps[StepDev].Command = script
		return pol
	}
	on := pol("testCommand: \"true\"\nsteps:\n  dev:\n    verifier: command\n")
	c := mustVerifier(t, p, StepDev, StoryKey{"1", 1}, on)
	r := c.Verify(context.Background())
	if !r.Verified {
		t.Fatalf("confined: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "inside")); err != nil {
		t.Fatalf("the project's own write did not land: %v", err)
	}
	// The verdict carries no output on success: rerun failing to see it.
	pol2 := pol("testCommand: \"true\"\nsteps:\n  dev:\n    verifier: command\n")
	pol2.Steps[StepDev].Command = script + "\nexit 1"
	out := mustVerifier(t, p, StepDev, StoryKey{"1", 1}, pol2).Verify(context.Background()).Detail
	for _, want := range []string{"TMP-OK", "OUTSIDE-DENIED", "HOOK-DENIED", "KEY=\n"} {
		if !strings.Contains(out+"\n", want) {
			t.Errorf("confined: %q missing in %q", want, out)
		}
	}
	if _, err := os.Stat(escaped); !os.IsNotExist(err) {
		t.Fatalf("the write outside the project landed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); !os.IsNotExist(err) {
		t.Fatalf("the hook landed: %v", err)
	}

	off := pol("sandbox: off\ntestCommand: \"true\"\nsteps:\n  dev:\n    verifier: command\n")
	off.Steps[StepDev].Command = script + "\nexit 1"
	out = mustVerifier(t, p, StepDev, StoryKey{"1", 1}, off).Verify(context.Background()).Detail
	if !strings.Contains(out, "KEY=PRIVATE-KEY") {
		t.Errorf("control: unconfined, the key reads: %q", out)
	}
	if _, err := os.Stat(escaped); err != nil {
		t.Fatalf("control: unconfined, the write outside must land: %v", err)
	}
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); err != nil {
		t.Fatalf("control: unconfined, the hook must land: %v", err)
	}
}

// Without bubblewrap a confined command is not run: the verdict says why.
func TestCommandVerifierWithoutTheSandboxRunsNothing(t *testing.T) {
	p := openProject(t)
	t.Setenv("PATH", t.TempDir()+string(os.PathListSeparator)+"/usr/bin:/bin")
	if _, err := exec.LookPath("bwrap"); err == nil {
		// bwrap in /usr/bin: hide it with a PATH of sh alone.
		dir := t.TempDir()
		sh, _ := exec.LookPath("sh")
		if err := os.Symlink(sh, filepath.Join(dir, "sh")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir)
	}
	pol, err := ParsePolicy("test", []byte("steps:\n  dev:\n    verifier: command\n    command: touch ran\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := mustVerifier(t, p, StepDev, StoryKey{"1", 1}, pol).Verify(context.Background())
	if r.Verified || !strings.Contains(r.Detail, "does not work here") || !strings.Contains(r.Detail, "could not run") {
		t.Fatalf("without bwrap: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(p.Root, "ran")); !os.IsNotExist(err) {
		t.Fatalf("the command ran unconfined: %v", err)
	}
}
