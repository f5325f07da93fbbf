package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/internal/testing/realbmad"
)

func TestMain(m *testing.M) {
	// This test binary stands for story-automator's own sandbox commands
	// (a confined command with hosts to reach: its proxy and bridge).
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case confine.NetCommand:
			os.Exit(confine.RunNet(os.Args[2:], os.Stderr))
		case confine.BridgeCommand:
			os.Exit(confine.RunBridge(os.Args[2:], os.Stderr))
		}
	}
	code := m.Run()
	realbmad.Cleanup()
	os.Exit(code)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A project made by the real 6.12 installer is the 6.12 generation, on the
// build-auto pipeline, with its paths read from the merged TOML.
func TestDetectARealInstall(t *testing.T) {
	dir := realbmad.Project(t)
	gen, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := gen.(*Skills)
	if !ok {
		t.Fatalf("Detect = %T, want *Skills", gen)
	}
	if want := []string{".claude/skills", ".agents/skills"}; !reflect.DeepEqual(s.Worker, want) || !reflect.DeepEqual(s.SkillFolders, want) {
		t.Fatalf("worker in %v, skills in %v; want %v", s.Worker, s.SkillFolders, want)
	}
	if got, want := s.ImplementationArtifacts, filepath.Join(dir, "_bmad-output", "implementation-artifacts"); got != want {
		t.Fatalf("implementation artifacts %s, want %s", got, want)
	}
	if got, want := s.PlanningArtifacts, filepath.Join(dir, "_bmad-output", "planning-artifacts"); got != want {
		t.Fatalf("planning artifacts %s, want %s", got, want)
	}
	c, err := ChoosePipeline(gen, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Pipeline != PipelineBuildAuto || c.Pinned || len(c.Warnings) != 0 || !strings.Contains(c.Why, "bmad-build-auto is installed (.claude/skills, .agents/skills)") {
		t.Fatalf("choice %+v", c)
	}
}

// Without the worker skill a 6.12 project stays on today's five steps.
func TestDetectWithoutTheWorkerIsFiveStep(t *testing.T) {
	dir := realbmad.Project(t)
	for _, d := range []string{".claude/skills", ".agents/skills"} {
		if err := os.RemoveAll(filepath.Join(dir, d, BuildAutoSkill)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := DetectPipeline(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Pipeline != PipelineFiveStep || c.Generation != "BMAD 6.12" || !strings.Contains(c.Why, "no bmad-build-auto skill") {
		t.Fatalf("choice %+v", c)
	}
}

// The TOML layers merge in BMAD's order (a personal override beats the
// team's), and a path that then differs from _bmad/bmm/config.yaml is warned about.
func TestDetectMergesTheLayersAndWarnsOnDrift(t *testing.T) {
	dir := realbmad.Project(t)
	writeFile(t, filepath.Join(dir, "_bmad/custom/config.toml"), "[modules.bmm]\nimplementation_artifacts = \"{project-root}/team/impl\"\nplanning_artifacts = \"{project-root}/team/plan\"\n")
	writeFile(t, filepath.Join(dir, "_bmad/custom/config.user.toml"), "[modules.bmm]\nimplementation_artifacts = \"{project-root}/mine/impl\"\n")
	gen, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := gen.(*Skills)
	if s.ImplementationArtifacts != filepath.Join(dir, "mine/impl") || s.PlanningArtifacts != filepath.Join(dir, "team/plan") {
		t.Fatalf("merged paths %s, %s", s.ImplementationArtifacts, s.PlanningArtifacts)
	}
	w := strings.Join(s.Warnings(), "\n")
	for _, want := range []string{"implementation_artifacts: the merged _bmad/config.toml layers say mine/impl, _bmad/bmm/config.yaml says _bmad-output/implementation-artifacts",
		"planning_artifacts: the merged _bmad/config.toml layers say team/plan"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
}

// A layer that does not parse is named, as a config error.
func TestDetectRefusesABrokenLayer(t *testing.T) {
	dir := realbmad.Project(t)
	writeFile(t, filepath.Join(dir, "_bmad/custom/config.toml"), "[modules.bmm\n")
	_, err := Detect(dir)
	if !errors.Is(err, ErrBMADConfig) || !strings.Contains(err.Error(), "_bmad/custom/config.toml") || Code(err) != "bmad_config_invalid" {
		t.Fatalf("err = %v (%s)", err, Code(err))
	}
}

// The older layout: no _bmad/config.toml.
func TestDetectTheOlderLayout(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, BMADConfigPath), "implementation_artifacts: \"{project-root}/impl\"\n")
	c, err := DetectPipeline(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Pipeline != PipelineFiveStep || c.Generation != "BMAD before 6.12" || !strings.Contains(c.Why, "no _bmad/config.toml") {
		t.Fatalf("choice %+v", c)
	}
}

// workflow.yaml's pipeline pins the choice; build-auto needs the worker.
func TestChoosePipelineHonoursThePin(t *testing.T) {
	withWorker := &Skills{Worker: []string{".claude/skills"}}
	c, err := ChoosePipeline(withWorker, PipelineFiveStep)
	if err != nil || c.Pipeline != PipelineFiveStep || !c.Pinned || !strings.Contains(c.Why, "pinned by .story-automator/workflow.yaml (the files call for build-auto") {
		t.Fatalf("pin five-step: %+v, %v", c, err)
	}
	c, err = ChoosePipeline(withWorker, PipelineBuildAuto)
	if err != nil || c.Pipeline != PipelineBuildAuto || !c.Pinned {
		t.Fatalf("pin build-auto: %+v, %v", c, err)
	}
	_, err = ChoosePipeline(Workflows{}, PipelineBuildAuto)
	if !errors.Is(err, ErrPipeline) || Code(err) != "pipeline_unavailable" || !strings.Contains(err.Error(), "no _bmad/config.toml") {
		t.Fatalf("pin build-auto without the worker: %v", err)
	}
}

func TestPolicyReadsThePipeline(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, PolicyFile), "pipeline: five-step\n")
	p, err := LoadPolicy(dir)
	if err != nil || p.Pipeline != PipelineFiveStep {
		t.Fatalf("policy %+v, %v", p, err)
	}
	writeFile(t, filepath.Join(dir, PolicyFile), "pipeline: loop\n")
	if _, err := LoadPolicy(dir); !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), `pipeline: must be build-auto or five-step, got "loop" (line 1)`) {
		t.Fatalf("err = %v", err)
	}
}

// Arrays of keyed tables merge by key, other arrays append, as BMAD's merge does.
func TestMergeTOMLFollowsBMAD(t *testing.T) {
	base := map[string]any{"a": map[string]any{"x": "1", "y": "2"}, "list": []any{"p"},
		"agents": []any{map[string]any{"code": "pm", "name": "John"}, map[string]any{"code": "dev", "name": "Amelia"}}}
	over := map[string]any{"a": map[string]any{"y": "3"}, "list": []any{"q"},
		"agents": []any{map[string]any{"code": "pm", "name": "Jane"}, map[string]any{"code": "qa", "name": "Quinn"}}}
	got := mergeTOML(base, over)
	want := map[string]any{"a": map[string]any{"x": "1", "y": "3"}, "list": []any{"p", "q"},
		"agents": []any{map[string]any{"code": "pm", "name": "Jane"}, map[string]any{"code": "dev", "name": "Amelia"}, map[string]any{"code": "qa", "name": "Quinn"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged %v\nwant %v", got, want)
	}
}
