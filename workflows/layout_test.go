package workflows

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// writeFiles creates files (path → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mkdirs(t *testing.T, dir string, rels ...string) {
	t.Helper()
	for _, r := range rels {
		if err := os.MkdirAll(filepath.Join(dir, r), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenUsesConfiguredArtifactsDir(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		BMADConfigPath: "implementation_artifacts: \"{project-root}/work/impl\"\nplanning_artifacts: '{project-root}/work/plan'\n",
	})
	mkdirs(t, root, "work/plan", DefaultArtifactsDir)
	p, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "work/impl"); p.ArtifactsDir != want || p.ArtifactsSource != SourceConfig {
		t.Errorf("ArtifactsDir = %s (%s), want %s from config", p.ArtifactsDir, p.ArtifactsSource, want)
	}
	if len(p.PlanningDirs) == 0 || p.PlanningDirs[0] != filepath.Join(root, "work/plan") {
		t.Errorf("PlanningDirs = %v, want the configured one first", p.PlanningDirs)
	}
	if got := p.SprintStatusPath(); got != filepath.Join(root, "work/impl/sprint-status.yaml") {
		t.Errorf("SprintStatusPath = %s", got)
	}
}

func TestOpenExpandsOtherConfigKeysAndRelativePaths(t *testing.T) {
	for value, want := range map[string]string{
		"'{output_folder}/impl'": "out/impl",
		"docs/sprints":           "docs/sprints",
		"./a/../b":               "b",
	} {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{
			BMADConfigPath: "output_folder: \"{project-root}/out\"\nimplementation_artifacts: " + value + "\n",
		})
		p, err := Open(root)
		if err != nil {
			t.Fatalf("%s: %v", value, err)
		}
		if p.ArtifactsDir != filepath.Join(root, want) {
			t.Errorf("%s: ArtifactsDir = %s, want %s", value, p.ArtifactsDir, filepath.Join(root, want))
		}
	}
}

func TestOpenFallsBackToDefaultThenLegacy(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root, LegacyArtifactsDir)
	p, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if p.ArtifactsDir != filepath.Join(root, LegacyArtifactsDir) || p.ArtifactsSource != SourceLegacy {
		t.Errorf("only legacy dir: got %s (%s)", p.ArtifactsDir, p.ArtifactsSource)
	}
	mkdirs(t, root, DefaultArtifactsDir, "_bmad-output/planning-artifacts")
	writeFiles(t, root, map[string]string{BMADConfigPath: "project_name: x\n"})
	p, err = Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if p.ArtifactsDir != filepath.Join(root, DefaultArtifactsDir) || p.ArtifactsSource != SourceDefault {
		t.Errorf("config without the key, both dirs: got %s (%s)", p.ArtifactsDir, p.ArtifactsSource)
	}
	if len(p.PlanningDirs) == 0 || p.PlanningDirs[0] != filepath.Join(root, "_bmad-output/planning-artifacts") {
		t.Errorf("PlanningDirs = %v", p.PlanningDirs)
	}
}

func TestOpenWithoutLayout(t *testing.T) {
	_, err := Open(t.TempDir())
	if !errors.Is(err, ErrLayoutNotFound) || Code(err) != "bmad_layout_not_found" {
		t.Fatalf("err = %v (%s), want bmad_layout_not_found", err, Code(err))
	}
}

func TestOpenRefusesArtifactsOutsideProject(t *testing.T) {
	outside := t.TempDir()
	for name, value := range map[string]string{
		"dotdot":    "\"{project-root}/../elsewhere\"",
		"absolute":  outside,
		"relative":  "../../x",
		"placehold": "'{output_folder}/impl'",
	} {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{
			BMADConfigPath: "output_folder: /tmp\nimplementation_artifacts: " + value + "\n",
		})
		_, err := Open(root)
		if !errors.Is(err, ErrOutsideProject) || Code(err) != "artifacts_outside_project" {
			t.Errorf("%s: err = %v (%s), want artifacts_outside_project", name, err, Code(err))
		}
	}
}

func TestOpenRefusesSymlinkOutOfProject(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{BMADConfigPath: "implementation_artifacts: '{project-root}/link/impl'\n"})
	if _, err := Open(root); !errors.Is(err, ErrOutsideProject) {
		t.Fatalf("err = %v, want ErrOutsideProject", err)
	}
}

func TestOpenRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]string{
		"not yaml":            "implementation_artifacts: [unclosed\n",
		"unknown placeholder": "implementation_artifacts: '{nowhere}/impl'\n",
		"not a string":        "implementation_artifacts: 3\n",
		"self reference":      "implementation_artifacts: '{implementation_artifacts}/x'\n",
	} {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{BMADConfigPath: cfg})
		if _, err := Open(root); !errors.Is(err, ErrBMADConfig) || Code(err) != "bmad_config_invalid" {
			t.Errorf("%s: err = %v, want bmad_config_invalid", name, err)
		}
	}
}
