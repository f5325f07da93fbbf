package workflows

import (
	"errors"
	"fmt"
	"github.com/story-automator/story-automator/internal/lazyre"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Where BMAD keeps things, relative to the project root.
const (
	BMADConfigPath      = "_bmad/bmm/config.yaml"
	DefaultArtifactsDir = "_bmad-output/implementation-artifacts"
	LegacyArtifactsDir  = "docs/bmad/implementation-artifacts"
	SprintStatusFile    = "sprint-status.yaml"
	// StateDir holds story-automator's own files inside a project.
	StateDir = ".story-automator"
)

// How Layout.ArtifactsDir was found.
const (
	SourceConfig  = "config"
	SourceDefault = "default"
	SourceLegacy  = "legacy"
)

// defaultPlanningDirs are searched for epics after the configured planning
// directory and the artifacts directory.
var defaultPlanningDirs = []string{"_bmad-output/planning-artifacts", "docs/bmad/planning-artifacts", "docs"}

// Layout is a BMAD project on disk: its root and where its artifacts live.
type Layout struct {
	// Root is the absolute project root.
	Root string
	// ArtifactsDir holds sprint-status.yaml and the story files.
	ArtifactsDir string
	// ArtifactsSource is SourceConfig, SourceDefault or SourceLegacy.
	ArtifactsSource string
	// PlanningDirs are the existing directories searched for epics besides
	// ArtifactsDir, in order.
	PlanningDirs []string

	cache *parseCache
}

// Open resolves a project's BMAD layout: implementation_artifacts from
// _bmad/bmm/config.yaml ({project-root} expanded, required to stay inside the
// project), else _bmad-output/implementation-artifacts, else
// docs/bmad/implementation-artifacts. A configured directory need not exist yet;
// without a config one of the two defaults must.
func Open(root string) (*Layout, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("project root %s: %w", root, err)
	}
	p := &Layout{Root: abs, cache: newParseCache()}
	cfg, err := readBMADConfig(abs)
	if err != nil {
		return nil, err
	}
	if dir, ok, err := cfg.dir("implementation_artifacts", "sprint_artifacts"); err != nil {
		return nil, err
	} else if ok {
		p.ArtifactsDir, p.ArtifactsSource = dir, SourceConfig
	} else if isDir(filepath.Join(abs, DefaultArtifactsDir)) {
		p.ArtifactsDir, p.ArtifactsSource = filepath.Join(abs, DefaultArtifactsDir), SourceDefault
	} else if isDir(filepath.Join(abs, LegacyArtifactsDir)) {
		p.ArtifactsDir, p.ArtifactsSource = filepath.Join(abs, LegacyArtifactsDir), SourceLegacy
	} else {
		return nil, fmt.Errorf("%w in %s: looked for %s (implementation_artifacts), %s and %s",
			ErrLayoutNotFound, abs, BMADConfigPath, DefaultArtifactsDir, LegacyArtifactsDir)
	}
	planning, ok, err := cfg.dir("planning_artifacts")
	if err != nil {
		return nil, err
	}
	var candidates []string
	if ok {
		candidates = append(candidates, planning)
	}
	for _, d := range defaultPlanningDirs {
		candidates = append(candidates, filepath.Join(abs, d))
	}
	for _, d := range candidates {
		if isDir(d) && d != p.ArtifactsDir && !slices.Contains(p.PlanningDirs, d) {
			p.PlanningDirs = append(p.PlanningDirs, d)
		}
	}
	return p, nil
}

// SprintStatusPath is <artifacts>/sprint-status.yaml.
func (p *Layout) SprintStatusPath() string {
	return filepath.Join(p.ArtifactsDir, SprintStatusFile)
}

// Rel returns path relative to the project root when it lies inside it.
func (p *Layout) Rel(path string) string {
	if rel, err := filepath.Rel(p.Root, path); err == nil && !escapes(rel) {
		return rel
	}
	return path
}

// bmadConfig is the part of _bmad/bmm/config.yaml we read.
type bmadConfig struct {
	root   string
	path   string
	values map[string]any
}

func readBMADConfig(root string) (*bmadConfig, error) {
	path := filepath.Join(root, BMADConfigPath)
	cfg := &bmadConfig{root: root, path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := yaml.Unmarshal(data, &cfg.values); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBMADConfig, path, err)
	}
	return cfg, nil
}

var placeholder = lazyre.New(`\{[^{}]*\}`)

// dir returns the first of keys that is set, expanded to an absolute path
// inside the project; ok is false when none is set.
func (c *bmadConfig) dir(keys ...string) (string, bool, error) {
	for _, key := range keys {
		raw, set := c.values[key]
		if !set || raw == nil {
			continue
		}
		s, isString := raw.(string)
		if !isString || strings.TrimSpace(s) == "" {
			return "", false, fmt.Errorf("%w: %s: %s must be a non-empty path", ErrBMADConfig, c.path, key)
		}
		path, err := c.expand(key, s, 0)
		if err != nil {
			return "", false, err
		}
		if err := insideRoot(c.root, path); err != nil {
			return "", false, fmt.Errorf("%s: %s %q: %w", c.path, key, s, err)
		}
		return path, true, nil
	}
	return "", false, nil
}

// expand replaces {project-root} and references to other config keys such as
// {output_folder}, and makes a relative result relative to the project root.
func (c *bmadConfig) expand(key, s string, depth int) (string, error) {
	var bad error
	out := placeholder().ReplaceAllStringFunc(s, func(ph string) string {
		name := ph[1 : len(ph)-1]
		if name == "project-root" {
			return c.root
		}
		ref, ok := c.values[name].(string)
		if !ok || depth > 3 || name == key {
			bad = fmt.Errorf("%w: %s: %s: unknown placeholder %s", ErrBMADConfig, c.path, key, ph)
			return ph
		}
		v, err := c.expand(name, ref, depth+1)
		if err != nil {
			bad = err
		}
		return v
	})
	if bad != nil {
		return "", bad
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(c.root, out)
	}
	return filepath.Clean(out), nil
}

// insideRoot refuses a path that leaves root, lexically or through a symlink
// in its existing part.
func insideRoot(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || escapes(rel) {
		return fmt.Errorf("%w: %s is outside %s", ErrOutsideProject, path, root)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil //nolint:nilerr // inside lexically; a root that cannot be resolved has no symlink out
	}
	existing := path
	for !exists(existing) && existing != root {
		existing = filepath.Dir(existing)
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return nil //nolint:nilerr // inside lexically; what cannot be resolved has no symlink out
	}
	if rel, err := filepath.Rel(realRoot, real); err != nil || escapes(rel) {
		return fmt.Errorf("%w: %s resolves to %s, outside %s", ErrOutsideProject, path, real, root)
	}
	return nil
}

func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
