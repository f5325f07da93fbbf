package workflows

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/story-automator/story-automator/agent"
)

// Pipelines: the ways a run can take a story through BMAD. five-step is
// create, dev, automate, review and commit, each a prompt of this tool's;
// build-auto is BMAD 6.12's own unattended worker skill, once per story.
const (
	PipelineFiveStep  = "five-step"
	PipelineBuildAuto = "build-auto"
)

// Pipelines lists the pipeline names `pipeline:` accepts.
func Pipelines() []string { return []string{PipelineBuildAuto, PipelineFiveStep} }

// The generations' names, as PipelineChoice.Generation gives them.
const (
	GenerationSkills    = "BMAD 6.12"
	GenerationWorkflows = "BMAD before 6.12"
)

// BuildAutoSkill is BMAD 6.12's unattended worker skill: installed, it
// selects the build-auto pipeline.
const BuildAutoSkill = "bmad-build-auto"

// CentralConfigFiles are BMAD 6.12's layered TOML configuration, relative to
// the project root, in the order its build skills merge them: installer,
// personal installer answers, team overrides, personal overrides. The first
// one marks the 6.12 layout.
var CentralConfigFiles = []string{"_bmad/config.toml", "_bmad/config.user.toml", "_bmad/custom/config.toml", "_bmad/custom/config.user.toml"}

// Generation is what one BMAD generation's files say about a project. Two
// implement it: Skills (BMAD 6.12: skills in the agents' skill folders, a
// layered TOML configuration) and Workflows (the older layout this tool's
// five steps drive). The next BMAD release is a third.
type Generation interface {
	// Name names the generation for people.
	Name() string
	// Pipeline is the pipeline the files call for, and what on disk says so.
	Pipeline() (name, why string)
	// Warnings are what the generation's files disagree on.
	Warnings() []string
}

// Skills is a project with BMAD 6.12's layout.
type Skills struct {
	// Worker lists the skill folders (project-relative) that hold
	// bmad-build-auto; SkillFolders every agent skill folder found with
	// BMAD skills in it.
	Worker, SkillFolders []string
	// ImplementationArtifacts and PlanningArtifacts are the merged TOML's
	// [modules.bmm] paths, absolute ("" when unset): where the build skills write.
	ImplementationArtifacts, PlanningArtifacts string
	warnings                                   []string
}

// Workflows is a project with the layout before 6.12 (or no BMAD install at
// all): what this tool's five steps drive.
type Workflows struct{}

var (
	_ Generation = (*Skills)(nil)
	_ Generation = Workflows{}
)

// Name is "BMAD 6.12".
func (*Skills) Name() string { return GenerationSkills }

// Pipeline is build-auto when the worker skill is installed, else five-step.
func (s *Skills) Pipeline() (string, string) {
	if len(s.Worker) > 0 {
		return PipelineBuildAuto, fmt.Sprintf("%s is installed (%s)", BuildAutoSkill, strings.Join(s.Worker, ", "))
	}
	return PipelineFiveStep, fmt.Sprintf("%s has no %s skill in %s", CentralConfigFiles[0], BuildAutoSkill, strings.Join(projectSkillFolders(), " or "))
}

// Warnings say where the merged TOML and _bmad/bmm/config.yaml disagree.
func (s *Skills) Warnings() []string { return s.warnings }

// Name is "BMAD before 6.12".
func (Workflows) Name() string { return GenerationWorkflows }

// Pipeline is always five-step.
func (Workflows) Pipeline() (string, string) {
	return PipelineFiveStep, "no " + CentralConfigFiles[0] + " (the layout before BMAD 6.12)"
}

// Warnings are none.
func (Workflows) Warnings() []string { return nil }

// Detect reads which BMAD generation a project has from its files: the 6.12
// layout when _bmad/config.toml exists, else the older one. A 6.12 project's
// TOML layers are merged as its build skills merge them; a layer that does
// not parse is ErrBMADConfig.
func Detect(root string) (Generation, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("project root %s: %w", root, err)
	}
	if _, err := os.Stat(filepath.Join(abs, CentralConfigFiles[0])); errors.Is(err, fs.ErrNotExist) {
		return Workflows{}, nil
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", CentralConfigFiles[0], err)
	}
	s := &Skills{}
	for _, dir := range projectSkillFolders() {
		bmadSkills, _ := filepath.Glob(filepath.Join(abs, dir, "bmad-*", "SKILL.md"))
		if len(bmadSkills) > 0 {
			s.SkillFolders = append(s.SkillFolders, dir)
		}
		if isFile(filepath.Join(abs, dir, BuildAutoSkill, "SKILL.md")) {
			s.Worker = append(s.Worker, dir)
		}
	}
	merged, err := mergedConfig(abs)
	if err != nil {
		return nil, err
	}
	cfg := &bmadConfig{root: abs, path: strings.Join(CentralConfigFiles, " + "), values: map[string]any{}}
	for _, table := range []string{"core", "modules.bmm"} {
		if t, ok := lookupTable(merged, table); ok {
			for k, v := range t {
				cfg.values[k] = v
			}
		}
	}
	yml, err := readBMADConfig(abs)
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"implementation_artifacts", "planning_artifacts"} {
		dir, ok, err := cfg.dir(key)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if key == "implementation_artifacts" {
			s.ImplementationArtifacts = dir
		} else {
			s.PlanningArtifacts = dir
		}
		if other, set, err := yml.dir(key); err == nil && set && other != dir {
			s.warnings = append(s.warnings, fmt.Sprintf(
				"%s: the merged %s say %s, %s says %s: the build skills write to the first, sprint planning and the retrospective read the second",
				key, CentralConfigFiles[0]+" layers", rel(abs, dir), BMADConfigPath, rel(abs, other)))
		}
	}
	return s, nil
}

// projectSkillFolders are the project skill folders the agent table names,
// each once, in the table's order.
func projectSkillFolders() []string {
	var out []string
	for _, name := range agent.SkillAgents() {
		p, ok := agent.LookupProfile(name)
		if d := p.SkillDirs["project"]; ok && d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// mergedConfig reads and merges the TOML layers that exist.
func mergedConfig(root string) (map[string]any, error) {
	merged := map[string]any{}
	for _, rel := range CentralConfigFiles {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rel, err)
		}
		var layer map[string]any
		if err := toml.Unmarshal(data, &layer); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBMADConfig, rel, err)
		}
		merged, _ = mergeTOML(merged, layer).(map[string]any)
	}
	return merged, nil
}

// mergeTOML merges override into base as BMAD's build skills do: tables
// recursively, arrays of tables that all carry a "code" (or else "id") by
// that key, other arrays appended, anything else replaced.
func mergeTOML(base, override any) any {
	if b, ok := base.(map[string]any); ok {
		if o, ok := override.(map[string]any); ok {
			out := make(map[string]any, len(b)+len(o))
			for k, v := range b {
				out[k] = v
			}
			for k, v := range o {
				if have, ok := out[k]; ok {
					out[k] = mergeTOML(have, v)
				} else {
					out[k] = v
				}
			}
			return out
		}
	}
	if b, ok := base.([]any); ok {
		if o, ok := override.([]any); ok {
			return mergeArrays(b, o)
		}
	}
	return override
}

func mergeArrays(base, override []any) []any {
	all := append(slices.Clone(base), override...)
	field := ""
	for _, f := range []string{"code", "id"} {
		if len(all) > 0 && slices.IndexFunc(all, func(v any) bool { _, ok := keyOf(v, f); return !ok }) < 0 {
			field = f
			break
		}
	}
	if field == "" {
		return all
	}
	var out []any
	at := map[string]int{}
	for _, v := range all {
		k, _ := keyOf(v, field)
		if i, ok := at[k]; ok {
			out[i] = v
			continue
		}
		at[k] = len(out)
		out = append(out, v)
	}
	return out
}

// keyOf is a table's non-empty string field f.
func keyOf(v any, f string) (string, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	s, ok := t[f].(string)
	return s, ok && s != ""
}

// lookupTable follows a dotted path of tables.
func lookupTable(m map[string]any, dotted string) (map[string]any, bool) {
	cur := m
	for _, part := range strings.Split(dotted, ".") {
		next, ok := cur[part].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !escapes(r) {
		return filepath.ToSlash(r)
	}
	return path
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// PipelineChoice is the pipeline a run on a project takes and why.
type PipelineChoice struct {
	// Pipeline is PipelineBuildAuto or PipelineFiveStep.
	Pipeline string `json:"pipeline"`
	// Why says what chose it: the files, or workflow.yaml's `pipeline:`.
	Why string `json:"why"`
	// Generation names the BMAD generation on disk.
	Generation string `json:"generation"`
	// Pinned reports a `pipeline:` in workflow.yaml.
	Pinned bool `json:"pinned,omitempty"`
	// Warnings are what the project's BMAD files disagree on.
	Warnings []string `json:"warnings,omitempty"`
	// Mode is how the build-auto pipeline takes the stories: "" in sprint
	// mode, else StoriesMode and the spec folder (see StoriesModeText).
	Mode string `json:"mode,omitempty"`
}

// StoriesModeText is PipelineChoice.Mode of a run over a spec folder.
func StoriesModeText(folder string) string { return "stories mode, folder " + folder }

// String is one line for people: "build-auto (why)", then the mode.
func (c PipelineChoice) String() string {
	s := c.Pipeline + " (" + c.Why + ")"
	if c.Mode != "" {
		s += "; " + c.Mode
	}
	return s
}

// ChoosePipeline picks the pipeline: pin (workflow.yaml's `pipeline:`, ""
// for none) when set, else the one the generation's files call for. A pin
// on build-auto in a project without the worker skill is ErrPipeline.
func ChoosePipeline(gen Generation, pin string) (PipelineChoice, error) {
	name, why := gen.Pipeline()
	c := PipelineChoice{Pipeline: name, Why: why, Generation: gen.Name(), Warnings: gen.Warnings()}
	if pin == "" || pin == name {
		if pin != "" {
			c.Pinned, c.Why = true, "pinned by "+PolicyFile+"; "+why
		}
		return c, nil
	}
	if pin == PipelineBuildAuto {
		return c, fmt.Errorf("%w: %s pins pipeline: %s, but %s", ErrPipeline, PolicyFile, pin, why)
	}
	c.Pipeline, c.Pinned, c.Why = pin, true, fmt.Sprintf("pinned by %s (the files call for %s: %s)", PolicyFile, name, why)
	return c, nil
}

// DetectPipeline is Detect, then ChoosePipeline with pin.
func DetectPipeline(root, pin string) (PipelineChoice, error) {
	gen, err := Detect(root)
	if err != nil {
		return PipelineChoice{}, err
	}
	return ChoosePipeline(gen, pin)
}

// ProjectPipeline is DetectPipeline with the pin of the project's workflow.yaml.
func ProjectPipeline(root string) (PipelineChoice, error) {
	pol, err := LoadPolicy(root)
	if err != nil {
		return PipelineChoice{}, err
	}
	return DetectPipeline(root, pol.Pipeline)
}

// RendererPath is BMAD 6.12's skill renderer, relative to the project: the
// launcher of bmad-build-auto runs it under uv.
const RendererPath = "_bmad/scripts/render_skill.py"

// NoRenderer reports a project without BMAD's renderer: one shaped as 6.12
// without BMAD's own files (the sample), or an install that lost it.
func NoRenderer(root string) bool {
	return !isFile(filepath.Join(root, filepath.FromSlash(RendererPath)))
}
