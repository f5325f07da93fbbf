package agentsim

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
	"github.com/story-automator/story-automator/tmux/child"
	"github.com/story-automator/story-automator/workflows"
)

// BehaviourBuildAuto acts out BMAD 6.12's worker skill, bmad-build-auto, on
// one story: launched by the skill's own renderer through uv, it writes the
// story's spec (spec-<story>.md in sprint mode, <folder>/stories/<id>-<slug>.md
// on a folder+id dispatch) and moves its frontmatter status draft →
// ready-for-dev → in-progress (baseline_revision first) → in-review → done,
// writes code and a test, commits them, and appends an Auto Run Result; it
// never touches sprint-status.yaml.
const BehaviourBuildAuto = "build-auto"

// EnvBuildAuto steers the build-auto behaviour: a comma-separated list of
// blocked=CONDITION (halt blocked with that condition), die=STATUS (exit 1
// with the spec left at draft, in-progress or in-review: a session that died
// mid-flight; die=STATUS:N on attempt N alone, the attempt the run puts in
// child.EnvAttempt), followup (recommend a follow-up review), intentgap
// (review finds an intent gap: the attempted change saved as a patch beside
// the spec, the code reverted, the spec blocked naming the patch). Each item
// may end in @STORY, and then applies to that story only: a story key in
// sprint mode (1-2, 1.2, 1-2-slug), a stories.yaml id in folder+id mode.
const EnvBuildAuto = "STORY_AUTOMATOR_SIM_BUILD_AUTO"

// HaltAfterPlanning is the phrase that stops the worker at ready-for-dev.
const HaltAfterPlanning = "Halt after planning."

func init() {
	Register(Behaviour{Name: BehaviourBuildAuto, Summary: "act out BMAD 6.12's " + workflows.BuildAutoSkill +
		" on the story, spec or spec folder and story id the prompt names; steered by " + EnvBuildAuto, Act: actBuildAuto})
}

// buildAuto is one invocation of the worker.
type buildAuto struct {
	s      *Sim
	root   string
	skills *workflows.Skills
	arg    string
	halt   bool
	// folder and id are a folder+id dispatch's spec folder (absolute) and
	// story id ("" in sprint mode); context is the prompt's text after its
	// first line, which a folder+id dispatch plans with.
	folder, id, context string
	// story is what an @STORY steer names: the stories.yaml id, or the
	// canonical story key in sprint mode (sprint true); "" when unknown.
	story   string
	sprint  bool
	blocked string
	die     string
	follow  bool
	gap     bool
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
	line, rest, _ := strings.Cut(after, "\n")
	w.halt = strings.Contains(line, HaltAfterPlanning)
	w.arg = strings.TrimSpace(strings.ReplaceAll(line, HaltAfterPlanning, ""))
	w.context = strings.TrimSpace(rest)
	if folder, id, ok := parseFolderDispatch(w.arg); ok {
		w.folder, w.id, w.story = w.abs(folder), id, id
	} else {
		w.story, w.sprint = w.storyOf(w.arg)
	}
	steers, err := parseSteers(s.Getenv(EnvBuildAuto))
	if err != nil {
		return nil, err
	}
	for _, st := range steers {
		if !w.names(st.story) {
			continue
		}
		switch st.key {
		case "blocked":
			w.blocked = st.value
		case "die":
			if st.attempt == 0 || st.attempt == atoiOr(s.Getenv(child.EnvAttempt), 1) {
				w.die = st.value
			}
		case "followup":
			w.follow = true
		case "intentgap":
			w.gap = true
		}
	}
	return w, nil
}

// steer is one item of EnvBuildAuto; attempt (die only) is the one
// attempt it applies to, 0 for every attempt.
type steer struct {
	key, value, story string
	attempt           int
}

// steerStory is what may follow an item's last "@": a story key or id.
var steerStory = lazyre.New(`^[A-Za-z0-9.-]+$`)

// parseSteers reads EnvBuildAuto; an item it does not know is refused, so
// a test's steer never silently misses.
func parseSteers(list string) ([]steer, error) {
	var out []steer
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		var st steer
		if i := strings.LastIndex(item, "@"); i >= 0 && steerStory().MatchString(item[i+1:]) {
			item, st.story = item[:i], item[i+1:]
		}
		var hasValue bool
		st.key, st.value, hasValue = strings.Cut(item, "=")
		if status, n, ok := strings.Cut(st.value, ":"); ok && st.key == "die" {
			if st.attempt, _ = strconv.Atoi(n); st.attempt < 1 {
				return nil, fmt.Errorf("%s: %q: attempt %q is not a positive number", EnvBuildAuto, item, n)
			}
			st.value = status
		}
		switch {
		case st.key == "blocked" && strings.TrimSpace(st.value) != "":
			st.value = strings.TrimSpace(st.value)
		case st.key == "die" && (st.value == workflows.SpecDraft || st.value == workflows.SpecInProgress || st.value == workflows.SpecInReview):
		case (st.key == "followup" || st.key == "intentgap") && !hasValue:
		default:
			return nil, fmt.Errorf("%s: %q: want blocked=CONDITION, die=draft|in-progress|in-review[:ATTEMPT], followup or intentgap, each optionally @STORY", EnvBuildAuto, item)
		}
		out = append(out, st)
	}
	return out, nil
}

// names reports whether a steer's @STORY (or its absence) covers this
// invocation's story.
func (w *buildAuto) names(target string) bool {
	switch {
	case target == "" || target == w.story:
		return true
	case w.sprint:
		k, err := workflows.ParseStoryKey(target)
		return err == nil && k.String() == w.story
	}
	return false
}

// storyOf is the story a sprint-mode argument or a spec path names: a
// folder-mode spec's stories.yaml id, or a sprint story's canonical key
// (sprint true); "" when it names none.
func (w *buildAuto) storyOf(arg string) (string, bool) {
	if strings.HasSuffix(arg, ".md") {
		path := w.abs(arg)
		if id := folderSpecID(path); id != "" {
			return id, false
		}
		arg = strings.TrimPrefix(strings.TrimSuffix(filepath.Base(path), ".md"), "spec-")
	}
	if k, err := workflows.ParseStoryKey(arg); err == nil {
		return k.String(), true
	}
	return "", false
}

// abs is a prompt's path resolved against the project.
func (w *buildAuto) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(w.root, path)
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
	if w.folder != "" {
		return w.folderWork()
	}
	dir := w.skills.ImplementationArtifacts
	var path, status string
	if strings.HasSuffix(w.arg, ".md") {
		path = w.abs(w.arg)
		spec, err := workflows.ReadSpec(path)
		if err != nil {
			return "", err
		}
		if spec.Status == workflows.SpecBlocked {
			return w.finish(path, workflows.SpecBlocked, "blocked spec supplied")
		}
		status = spec.Status
	} else {
		var slug, problem string
		if key, err := workflows.ParseStoryKey(w.arg); err == nil {
			slug = strings.ToLower(strings.Fields(w.arg)[0])
			if slug == key.String() || slug == key.Dotted() {
				slug = key.String()
			}
			problem = "story " + key.Dotted()
		} else {
			// Free text: a fresh story whose slug the worker picks from it.
			slug, problem = freeTextSlug(w.arg), w.arg
		}
		if slug == "" {
			return w.resultFile(dir, "unclear intent")
		}
		path = filepath.Join(dir, "spec-"+slug+".md")
		if spec, err := workflows.ReadSpec(path); err == nil && spec.Status == workflows.SpecDraft {
			return w.from(path, workflows.SpecDraft) // the same work, planning interrupted: resume it
		}
		for n := 2; fileExists(path); n++ {
			path = filepath.Join(dir, fmt.Sprintf("spec-%s-%d.md", slug, n))
		}
		status = workflows.SpecDraft
		if err := writeProjectFile(path, "---\ntitle: '"+slug+"'\ntype: 'feature'\nstatus: 'draft'\nreview_loop_iteration: 0\nfollowup_review_recommended: false\nwarnings: []\ndeferred: []\n---\n\n# "+slug+"\n\n## Intent\n\n**Problem:** "+problem+".\n"); err != nil {
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
			if w.blocked != "" {
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
			if w.gap && status == workflows.SpecInReview {
				return w.intentGap(path)
			}
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

// intentGap acts out review's intent_gap branch: the attempted change
// saved as a patch in the implementation artifacts, the code reverted, the
// spec blocked with the condition and the patch's path.
func (w *buildAuto) intentGap(path string) (string, error) {
	if _, err := w.git("add", "--intent-to-add", "--", SimWorkDir); err != nil {
		return "", err
	}
	diff, err := w.git("diff", "--", SimWorkDir)
	if err != nil {
		return "", err
	}
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "spec-"), ".md")
	patch := filepath.Join(filepath.Dir(path), "intent-gap-"+name+".patch")
	if err := writeProjectFile(patch, diff); err != nil {
		return "", err
	}
	if _, err := w.git("reset", "-q", "--", SimWorkDir); err != nil {
		return "", err
	}
	if err := os.RemoveAll(filepath.Join(w.root, SimWorkDir)); err != nil {
		return "", err
	}
	rel, _ := filepath.Rel(w.root, patch)
	if err := setSpecField(path, "status", "'"+workflows.SpecBlocked+"'"); err != nil {
		return "", err
	}
	return workflows.SpecBlocked, appendText(path, "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: intent gap\n\n"+
		"Unresolved: does sign-up need an e-mail check?\nAttempted change saved as `"+filepath.ToSlash(rel)+"`; the code is reverted.\n")
}

// freeTextSlug is a spec's slug for a free-text dispatch, as a model
// would pick one: the text's first words, lowercase, runs of other
// characters to "-", at most 40 characters ("" for blank text).
func freeTextSlug(text string) string {
	var b strings.Builder
	for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}) {
		if b.Len()+len(word)+1 > 40 {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteString(word)
	}
	return b.String()
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
