package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
	"github.com/story-automator/story-automator/orchestrator/bmad"
)

func TestMain(m *testing.M) {
	code := m.Run()
	realbmad.Cleanup()
	os.Exit(code)
}

func fixedUV(u bmad.UV) func(context.Context) bmad.UV {
	return func(context.Context) bmad.UV { return u }
}

var goodUV = bmad.UV{Path: "/opt/uv", Version: "uv 0.13.9", Python: "/usr/bin/python3.12", PythonVersion: "3.12.1"}

// On a real 6.12 project doctor names the build-auto pipeline and why, and
// fails without uv (or its Python) with the code a run refuses with.
func TestDoctorReportsPipelineAndUV(t *testing.T) {
	dir := realbmad.Project(t)
	checks := checkBMAD(context.Background(), Options{Root: dir, FindUV: fixedUV(goodUV)})
	if p, u := checks[0], checks[1]; p.Status != OK || !strings.Contains(p.Detail, "BMAD 6.12: build-auto (bmad-build-auto is installed") ||
		u.Status != OK || u.Detail != "uv: uv 0.13.9 (/opt/uv); Python 3.12.1 (/usr/bin/python3.12)" {
		t.Fatalf("checks %+v", checks)
	}
	checks = checkBMAD(context.Background(), Options{Root: dir, FindUV: fixedUV(bmad.UV{})})
	if u := checks[1]; u.Status != Fail || u.Code != bmad.CodeUVMissing || !strings.Contains(u.Fix, bmad.UVInstall) {
		t.Fatalf("uv missing: %+v", u)
	}
	checks = checkBMAD(context.Background(), Options{Root: dir, FindUV: fixedUV(bmad.UV{Path: "/opt/uv", Version: "uv 0.13.9", Detail: "No interpreter found"})})
	if u := checks[1]; u.Status != Fail || u.Code != bmad.CodeUVPythonMissing || !strings.Contains(u.Detail, "No interpreter found") {
		t.Fatalf("python missing: %+v", u)
	}
	if err := os.WriteFile(filepath.Join(dir, "_bmad/custom/config.toml"), []byte("[modules.bmm]\nimplementation_artifacts = \"{project-root}/elsewhere\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks = checkBMAD(context.Background(), Options{Root: dir, FindUV: fixedUV(goodUV)})
	if p := checks[0]; p.Status != Warn || !strings.Contains(p.Detail, "implementation_artifacts: the merged") {
		t.Fatalf("drift: %+v", p)
	}
}

// A project before 6.12 takes the five steps and needs no uv.
func TestDoctorOnAnOlderProjectNeedsNoUV(t *testing.T) {
	checks := checkBMAD(context.Background(), Options{Root: t.TempDir(), FindUV: fixedUV(bmad.UV{})})
	if p, u := checks[0], checks[1]; p.Status != OK || !strings.Contains(p.Detail, "BMAD before 6.12: five-step") ||
		u.Status != OK || !strings.Contains(u.Detail, "only BMAD 6.12's skills need it") {
		t.Fatalf("checks %+v", checks)
	}
}
