package agentsim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/workflows"
)

// BehaviourBuildAuto acts out BMAD 6.12's worker skill, bmad-build-auto, on
// one story of a sprint-mode project: launched by the skill's own renderer
// through uv, it writes a spec-<story>.md and moves its frontmatter status
// draft → ready-for-dev → in-progress (baseline_revision first) → in-review
// → done, writes code and a test, commits them, and appends an Auto Run
// Result; it never touches sprint-status.yaml.
const BehaviourBuildAuto = "build-auto"

// EnvBuildAuto steers the build-auto behaviour: a comma-separated list of
// blocked=CONDITION (halt blocked with that condition; CONDITION@KEY only
// the story whose board key starts with KEY, as 1-1), die=STATUS (exit 1
// with the spec left at draft, in-progress or in-review: a session that died
// mid-flight), followup (recommend a follow-up review).
const EnvBuildAuto = "STORY_AUTOMATOR_SIM_BUILD_AUTO"

// HaltAfterPlanning is the phrase that stops the worker at ready-for-dev.
const HaltAfterPlanning = "Halt after planning."

func init() {
	Register(Behaviour{Name: BehaviourBuildAuto, Summary: "act out BMAD 6.12's " + workflows.BuildAutoSkill +
		" on the story or spec the prompt names (sprint mode); steered by " + EnvBuildAuto, Act: actBuildAuto})
}

// buildAuto is one invocation of the worker.
type buildAuto struct {
	s       *Sim
	root    string
	skills  *workflows.Skills
	arg     string
	halt    bool
	blocked string
	// blockedOnly is the story key blocked= is for ("" = every story).
	blockedOnly string
	die         string
	follow      bool
}

func actBuildAuto(ctx context.Context, s *Sim) int {
	if invokesRetro(s.Prompt) {
		return actRetro(ctx, s)
	}
	if !Sleep(ctx, s.Options.Delay) {
		return 1
	}
	w, err := newBuildAuto(s)
	if err != nil {
		fmt.Fprintf(s.Out, "agent-sim build-auto: %v\nHALT\n", err)
		return 1
	}
	if err := w.launch(); err != nil {
		// The launcher's one command failed: no spec, no result file.
		fmt.Fprintf(s.Out, "agent-sim build-auto: the skill's launcher failed: %v\nHALT\n", err)
		return 1
	}
	status, err := w.work()
	if err != nil {
		fmt.Fprintf(s.Out, "agent-sim build-auto: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.Out, "agent-sim build-auto: %s\n", status)
	return 0
}

func newBuildAuto(s *Sim) (*buildAuto, error) {
	root, err := workRoot(s)
	if err != nil {
		return nil, err
	}
	w := &buildAuto{s: s, root: root}
	_, after, ok := strings.Cut(s.Prompt, workflows.BuildAutoSkill)
	if !ok {
		return nil, fmt.Errorf("the prompt does not invoke %s", workflows.BuildAutoSkill)
	}
	line, _, _ := strings.Cut(after, "\n")
	w.halt = strings.Contains(line, HaltAfterPlanning)
	w.arg = strings.TrimSpace(strings.ReplaceAll(line, HaltAfterPlanning, ""))
	for _, item := range strings.Split(s.Getenv(EnvBuildAuto), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(item), "=")
		switch k {
		case "blocked":
			w.blocked, w.blockedOnly, _ = strings.Cut(v, "@")
		case "die":
			w.die = v
		case "followup":
			w.follow = true
		}
	}
	return w, nil
}

// launch runs what the skill's SKILL.md runs: BMAD's renderer under uv,
// which prints the workflow.md to follow.
func (w *buildAuto) launch() error {
	gen, err := workflows.Detect(w.root)
	if err != nil {
		return err
	}
	sk, ok := gen.(*workflows.Skills)
	if !ok || len(sk.Worker) == 0 {
		return fmt.Errorf("no %s skill in this project", workflows.BuildAutoSkill)
	}
	w.skills = sk
	if workflows.NoRenderer(w.root) {
		if pol, err := workflows.LoadPolicy(w.root); err == nil && pol.Pipeline == workflows.PipelineBuildAuto {
			// A project shaped as 6.12 without BMAD's files (the sample)
			// pins the pipeline: there is no renderer to run.
			fmt.Fprintf(w.s.Out, "agent-sim build-auto: no %s in this project, which pins the build-auto pipeline: acting out the worker without BMAD's renderer\n", workflows.RendererPath)
			return nil
		}
	}
	uv, err := exec.LookPath("uv")
	if err != nil {
		return fmt.Errorf("uv: command not found")
	}
	cmd := exec.Command(uv, "run", "--no-cache", filepath.Join(w.root, filepath.FromSlash(workflows.RendererPath)),
		"--project-root", w.root, "--skill", filepath.Join(w.root, sk.Worker[0], workflows.BuildAutoSkill))
	cmd.Dir = w.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("render_skill.py: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if !strings.Contains(string(out), "workflow.md") {
		return fmt.Errorf("render_skill.py printed no workflow.md: %s", strings.TrimSpace(string(out)))
	}
	return nil
}

// work routes by the spec's status as step 1 of the skill does, and goes on
// until a terminal status (or the death it was told to act out).
func (w *buildAuto) work() (string, error) {
	dir := w.skills.ImplementationArtifacts
	var path, status string
	if strings.HasSuffix(w.arg, ".md") {
		path = w.arg
		if !filepath.IsAbs(path) {
			path = filepath.Join(w.root, path)
		}
		spec, err := workflows.ReadSpec(path)
		if err != nil {
			return "", err
		}
		if spec.Status == workflows.SpecBlocked {
			return w.finish(path, workflows.SpecBlocked, "blocked spec supplied")
		}
		status = spec.Status
	} else {
		key, err := workflows.ParseStoryKey(w.arg)
		if err != nil {
			return w.resultFile(dir, "unclear intent")
		}
		slug := strings.ToLower(strings.Fields(w.arg)[0])
		if slug == key.String() || slug == key.Dotted() {
			slug = key.String()
		}
		path = filepath.Join(dir, "spec-"+slug+".md")
		if spec, err := workflows.ReadSpec(path); err == nil && spec.Status == workflows.SpecDraft {
			return w.from(path, workflows.SpecDraft) // the same work, planning interrupted: resume it
		}
		for n := 2; fileExists(path); n++ {
			path = filepath.Join(dir, fmt.Sprintf("spec-%s-%d.md", slug, n))
		}
		status = workflows.SpecDraft
		if err := writeProjectFile(path, "---\ntitle: '"+slug+"'\ntype: 'feature'\nstatus: 'draft'\nreview_loop_iteration: 0\nfollowup_review_recommended: false\nwarnings: []\ndeferred: []\n---\n\n# "+slug+"\n\n## Intent\n\n**Problem:** story "+key.Dotted()+".\n"); err != nil {
			return "", err
		}
	}
	return w.from(path, status)
}

// from goes on from a spec's status until a terminal one.
func (w *buildAuto) from(path, status string) (string, error) {
	for {
		if w.die == status {
			return "", fmt.Errorf("died with the spec %s", status)
		}
		var err error
		switch status {
		case workflows.SpecDraft:
			if w.blocked != "" && w.blocks(path) {
				return w.finish(path, workflows.SpecBlocked, w.blocked)
			}
			status, err = workflows.SpecReadyForDev, setSpecField(path, "status", "'ready-for-dev'")
			if err == nil && w.halt {
				return w.finish(path, status, "")
			}
		case workflows.SpecReadyForDev:
			head, herr := w.git("rev-parse", "HEAD")
			if herr != nil {
				return w.finish(path, workflows.SpecBlocked, "version-control metadata not writable")
			}
			if err = setSpecField(path, "baseline_revision", strings.TrimSpace(head)); err == nil {
				status, err = workflows.SpecInProgress, setSpecField(path, "status", "'in-progress'")
			}
		case workflows.SpecInProgress:
			name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "spec-"), ".md")
			if err = writeProjectFile(filepath.Join(w.root, SimWorkDir, name+".txt"), "code of "+name+"\n"); err == nil {
				err = writeProjectFile(filepath.Join(w.root, SimWorkDir, name+"_test.txt"), "test of "+name+": passes\n")
			}
			if err == nil {
				status, err = workflows.SpecInReview, setSpecField(path, "status", "'in-review'")
			}
		case workflows.SpecInReview, workflows.SpecDone:
			follow := "false"
			if w.follow && status == workflows.SpecInReview {
				follow = "true"
			}
			if err = setSpecField(path, "followup_review_recommended", follow); err == nil {
				err = setSpecField(path, "status", "'done'")
			}
			if err == nil {
				return w.finish(path, workflows.SpecDone, "")
			}
		default:
			return w.finish(path, workflows.SpecBlocked, "unrecognized status in existing story file")
		}
		if err != nil {
			return "", err
		}
	}
}

// blocks reports whether blocked= is for the story of the spec at path.
func (w *buildAuto) blocks(path string) bool {
	name := strings.TrimPrefix(filepath.Base(path), "spec-")
	return w.blockedOnly == "" || strings.HasPrefix(name, w.blockedOnly+"-") || strings.HasPrefix(name, w.blockedOnly+".")
}

// finish writes the final status and an Auto Run Result; on done it commits
// the work and checks the tree is clean.
func (w *buildAuto) finish(path, status, condition string) (string, error) {
	if err := setSpecField(path, "status", "'"+status+"'"); err != nil {
		return "", err
	}
	result := "\n## Auto Run Result\n\nStatus: " + status + "\n"
	if condition != "" {
		result += "Blocking condition: " + condition + "\n"
	}
	if status == workflows.SpecDone {
		result += "\nSummary: the simulated worker wrote the code and its test under " + SimWorkDir + "/.\n"
	}
	if err := appendText(path, result); err != nil {
		return "", err
	}
	if status != workflows.SpecDone {
		return status, nil
	}
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "spec-"), ".md")
	if _, err := w.git("add", "-A"); err != nil {
		return "", err
	}
	if _, err := w.git("commit", "-q", "-m", name+": done by the simulated "+workflows.BuildAutoSkill); err != nil {
		return "", err
	}
	if dirty, err := w.git("status", "--porcelain"); err != nil || strings.TrimSpace(dirty) != "" {
		return w.finish(path, workflows.SpecBlocked, "finalization left repository dirty")
	}
	return status, nil
}

// resultFile is the result a halt with no spec known leaves.
func (w *buildAuto) resultFile(dir, condition string) (string, error) {
	path := filepath.Join(dir, "bmad-build-auto-result-"+fmt.Sprint(os.Getpid())+".md")
	text := "---\nstatus: blocked\n---\n\n# BMad Build Auto Result\n\nStatus: blocked\nBlocking condition: " + condition + "\n"
	return workflows.SpecBlocked, writeProjectFile(path, text)
}

func (w *buildAuto) git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = w.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// setSpecField sets (or adds) one frontmatter key of a spec.
func setSpecField(path, key, value string) error {
	return editFile(path, func(text string) string {
		rest, ok := strings.CutPrefix(text, "---\n")
		end := strings.Index(rest, "\n---\n")
		if !ok || end < 0 {
			return text
		}
		lines := strings.Split(rest[:end], "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, key+":") {
				lines[i] = key + ": " + value
				return "---\n" + strings.Join(lines, "\n") + rest[end:]
			}
		}
		return "---\n" + strings.Join(append(lines, key+": "+value), "\n") + rest[end:]
	})
}

func appendText(path, text string) error {
	return editFile(path, func(s string) string { return s + text })
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
