package realbmad

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// A project is what the real installer wrote, committed, and each test gets
// a copy of its own.
func TestProjectIsARealInstallOfItsOwn(t *testing.T) {
	a, b := Project(t), Project(t)
	if a == b {
		t.Fatalf("two projects share %s", a)
	}
	for _, rel := range []string{".claude/skills/bmad-build-auto/SKILL.md", ".agents/skills/bmad-build-auto/SKILL.md",
		"_bmad/config.toml", "_bmad/bmm/config.yaml", "_bmad/scripts/render_skill.py"} {
		if _, err := os.Stat(filepath.Join(a, rel)); err != nil {
			t.Errorf("the installed project has no %s: %v", rel, err)
		}
	}
	manifest, err := os.ReadFile(filepath.Join(a, "_bmad/_config/manifest.yaml"))
	if err != nil || !strings.Contains(string(manifest), "version: "+Version) {
		t.Fatalf("manifest does not name %s (%v):\n%s", Version, err, manifest)
	}
	status := exec.Command("git", "status", "--porcelain")
	status.Dir = a
	if out, err := status.Output(); err != nil || len(out) != 0 {
		t.Fatalf("the project's tree is not clean (%v):\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(a, "mine"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b, "mine")); err == nil {
		t.Fatal("a file written in one project shows in the other")
	}
}

// BMAD's own sprint_plan.py runs under the pinned uv with its dependency from
// the pinned wheels.
func TestRunScriptRunsBMADsOwnScript(t *testing.T) {
	in := Require(t)
	dir := Project(t)
	out := in.RunScript(t, dir, ".claude/skills/bmad-sprint-planning/scripts/sprint_plan.py",
		"validate", "--status-file", "missing.yaml")
	if !strings.Contains(out, `"action": "validate"`) {
		t.Fatalf("sprint_plan.py validate printed %s", out)
	}
}

// With CI=true a missing install fails the test; otherwise it skips it.
func TestRequireFailsUnderCIWhenMissing(t *testing.T) {
	if os.Getenv("REALBMAD_CHILD") == "1" {
		Require(t)
		t.Log("ran past Require")
		return
	}
	for _, ci := range []string{"true", ""} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireFailsUnderCIWhenMissing$", "-test.v")
		cmd.Env = append(os.Environ(), "REALBMAD_CHILD=1", "CI="+ci, "STORY_AUTOMATOR_BMAD_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		failed, skipped := err != nil, strings.Contains(string(out), "--- SKIP")
		if failed != (ci == "true") || skipped == (ci == "true") || strings.Contains(string(out), "ran past Require") {
			t.Fatalf("CI=%q: failed %v, skipped %v\n%s", ci, failed, skipped, out)
		}
		if !strings.Contains(string(out), InstallCommand) {
			t.Fatalf("CI=%q: the message does not name %s:\n%s", ci, InstallCommand, out)
		}
	}
}
