package bmad

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

func TestForPicksThePipelineTheChoiceNames(t *testing.T) {
	if _, ok := For(workflows.PipelineChoice{Pipeline: workflows.PipelineBuildAuto}, "", nil, nil).(BuildAuto); !ok {
		t.Fatal("build-auto is not BuildAuto")
	}
	five := For(workflows.PipelineChoice{Pipeline: workflows.PipelineFiveStep}, "", nil, nil)
	if _, ok := five.(FiveStep); !ok || five.Ready(context.Background()) != nil {
		t.Fatalf("five-step is %T", five)
	}
}

// The build-auto pipeline checks uv, then its Python, and is ready with both.
func TestBuildAutoReadyChecksUVThenItsPython(t *testing.T) {
	cases := []struct {
		uv   UV
		code string
		says string
	}{
		{UV{}, CodeUVMissing, UVInstall},
		{UV{Path: "/opt/uv", Detail: "No interpreter found for Python >=3.11"}, CodeUVPythonMissing, "uv python install 3.11"},
	}
	for _, c := range cases {
		p := BuildAuto{C: workflows.PipelineChoice{Pipeline: workflows.PipelineBuildAuto, Why: "bmad-build-auto is installed (.claude/skills)"},
			Toolchain: func(context.Context) UV { return c.uv }}
		b, ok := orchestrator.AsBlocker(p.Ready(context.Background()))
		if !ok || b.Code != c.code || !strings.Contains(b.Action, c.says) {
			t.Fatalf("uv %+v: blocker %+v", c.uv, b)
		}
	}
	ok := BuildAuto{Toolchain: func(context.Context) UV { return UV{Path: "/opt/uv", Python: "/usr/bin/python3"} }}
	if err := ok.Ready(context.Background()); err != nil {
		t.Fatalf("uv and its Python found: %v", err)
	}
}

// FindUV runs the uv on the PATH with Python downloads off.
func TestFindUVAsksUVForItsPython(t *testing.T) {
	bin := t.TempDir()
	py := filepath.Join(bin, "python3.12")
	script := func(path, body string) {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script(py, "echo 'Python 3.12.1'\n")
	script(filepath.Join(bin, "uv"), `case "$1" in
--version) echo 'uv 0.13.9';;
python) [ "$UV_PYTHON_DOWNLOADS" = never ] && [ "$4" = ">=3.11" ] && echo `+py+` && exit 0; echo "error: No interpreter found" >&2; exit 2;;
esac
`)
	t.Setenv("PATH", bin)
	u := FindUV(context.Background())
	if u.Path != filepath.Join(bin, "uv") || u.Version != "uv 0.13.9" || u.Python != py || u.PythonVersion != "3.12.1" || u.Check() != nil {
		t.Fatalf("found %+v", u)
	}
	t.Setenv("PATH", t.TempDir())
	if u := FindUV(context.Background()); u.Path != "" {
		t.Fatalf("found %+v on a PATH without uv", u)
	}
}

func TestFindUVSaysWhyThereIsNoPython(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "uv"), []byte("#!/bin/sh\n[ \"$1\" = --version ] && echo uv && exit 0\necho 'error: No interpreter found for Python >=3.11' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	u := FindUV(context.Background())
	b, ok := orchestrator.AsBlocker(u.Check())
	if !ok || b.Code != CodeUVPythonMissing || !strings.Contains(b.Error(), "No interpreter found for Python >=3.11") {
		t.Fatalf("uv %+v: %v", u, u.Check())
	}
}

// A project that pins the build-auto pipeline and has no BMAD renderer
// (the sample) needs no uv; one that does not pin it is checked as any.
func TestBuildAutoReadyWithoutARenderer(t *testing.T) {
	root := t.TempDir()
	noUV := func(context.Context) UV { return UV{} }
	pinned := BuildAuto{C: workflows.PipelineChoice{Pipeline: workflows.PipelineBuildAuto, Pinned: true}, Root: root, Toolchain: noUV}
	if err := pinned.Ready(context.Background()); err != nil {
		t.Fatalf("pinned, no renderer: %v", err)
	}
	unpinned := pinned
	unpinned.C.Pinned = false
	if b, ok := orchestrator.AsBlocker(unpinned.Ready(context.Background())); !ok || b.Code != CodeUVMissing {
		t.Fatalf("unpinned: %v", b)
	}
	if err := os.MkdirAll(filepath.Join(root, "_bmad", "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(workflows.RendererPath)), []byte("print()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, ok := orchestrator.AsBlocker(pinned.Ready(context.Background())); !ok || b.Code != CodeUVMissing {
		t.Fatalf("pinned with a renderer: %v", b)
	}
}
