package sample

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/workflows"
)

func TestWriteSampleIsAWorkingBMADProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "greeter")
	if err := WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.ArtifactsSource != workflows.SourceConfig {
		t.Errorf("artifacts dir from %s, want config", p.ArtifactsSource)
	}
	stories, err := p.Stories()
	if err != nil {
		t.Fatal(err)
	}
	var got, deps []string
	for _, s := range stories {
		got = append(got, s.Key.String())
		for _, d := range s.DependsOn {
			deps = append(deps, s.Key.Dotted()+"<-"+d.Dotted())
		}
		if s.Status != workflows.StatusBacklog || s.Title == "" || s.Slug == "" {
			t.Errorf("story %+v", s)
		}
	}
	if strings.Join(got, " ") != strings.Join(Stories, " ") {
		t.Errorf("stories %v, want %v", got, Stories)
	}
	if strings.Join(deps, " ") != "1.2<-1.1 1.3<-1.2 1.4<-1.1" {
		t.Errorf("dependencies %v", deps)
	}
	pol, err := workflows.LoadPolicy(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pol.TestCommand != TestCommand || pol.MaxReviewCycles() != 3 {
		t.Errorf("policy: testCommand %q maxCycles %d", pol.TestCommand, pol.MaxReviewCycles())
	}
	// The dev verifier runs the test command, which passes on the fresh sample.
	c, err := p.Verifier(workflows.StepDev, stories[0].Key, pol)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Verify(context.Background()); r.Verified || !strings.Contains(r.Detail, "dev_completion") {
		t.Errorf("dev verifier on a backlog story: %+v", r)
	}
	if out, err := exec.Command("sh", "-c", "cd "+dir+" && "+TestCommand+" && ./bin/greet --help").CombinedOutput(); err != nil {
		t.Errorf("test command and executable app: %v\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(dir, workflows.StateDir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf(".story-automator: %v %v", fi, err)
	}
	for _, f := range []string{".gitignore", "_bmad-output/implementation-artifacts/sprint-status.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s missing: %v", f, err)
		}
	}
}

func TestWriteSampleRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSample(dir); err == nil || !strings.Contains(err.Error(), "README.md already exists") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(data) != "mine\n" {
		t.Errorf("README.md overwritten: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "bin")); err == nil {
		t.Error("files written despite the refusal")
	}
}

// The build-auto sample is shaped as a BMAD 6.12 project on the build-auto
// pipeline, pinned, with the same stories, and none of BMAD's own files
// (no renderer, no scripts).
func TestWriteBuildAutoSampleIsA612ShapedProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "greeter")
	if err := WriteBuildAutoSample(dir); err != nil {
		t.Fatal(err)
	}
	c, err := workflows.DetectPipeline(dir, "")
	if err != nil || c.Pipeline != workflows.PipelineBuildAuto || c.Generation != "BMAD 6.12" {
		t.Fatalf("pipeline %+v (%v)", c, err)
	}
	pol, err := workflows.LoadPolicy(dir)
	if err != nil || pol.Pipeline != workflows.PipelineBuildAuto || pol.TestCommand != TestCommand {
		t.Fatalf("policy %+v (%v)", pol, err)
	}
	p, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if stories, err := p.Stories(); err != nil || len(stories) != len(Stories) {
		t.Fatalf("stories %v (%v)", stories, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "_bmad", "scripts")); !os.IsNotExist(err) {
		t.Fatalf("the sample carries BMAD's scripts: %v", err)
	}
	if err := WriteBuildAutoSample(dir); err == nil {
		t.Fatal("the sample overwrote itself")
	}
}
