package agentsim

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realbmad"
	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

// workerProject is a real BMAD 6.12 project with uv on the PATH (offline,
// no Python downloads) and a git identity, for the simulated worker.
func workerProject(t *testing.T) string {
	t.Helper()
	in := realbmad.Require(t)
	dir := realbmad.Project(t)
	t.Setenv("PATH", filepath.Dir(in.UV)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range map[string]string{"UV_OFFLINE": "1", "UV_PYTHON_DOWNLOADS": "never", "GIT_AUTHOR_NAME": "sim", "GIT_AUTHOR_EMAIL": "sim@example.invalid",
		"GIT_COMMITTER_NAME": "sim", "GIT_COMMITTER_EMAIL": "sim@example.invalid"} {
		t.Setenv(k, v)
	}
	return dir
}

// dispatch runs the simulated worker once with prompt, as a child would.
func dispatch(t *testing.T, dir, prompt, steer string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	env := map[string]string{"PROJECT_ROOT": dir, EnvBuildAuto: steer}
	code := Run(context.Background(), &Sim{Prompt: prompt, Options: Options{Behaviour: BehaviourBuildAuto}, Out: &out,
		Getenv: func(k string) string { return env[k] }})
	return code, out.String()
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func artifacts(dir string) string {
	return filepath.Join(dir, "_bmad-output", "implementation-artifacts")
}

// A fresh sprint-mode dispatch: a new spec led by the story key, taken to
// done from its baseline, one commit, a clean tree, no board written.
func TestBuildAutoTakesAStoryToDone(t *testing.T) {
	dir := workerProject(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	code, out := dispatch(t, dir, "/bmad-build-auto 1-1-sign-up\nThe board belongs to the run.", "")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	path, err := workflows.NewSprintSpec(artifacts(dir), nil, workflows.StoryKey{Epic: "1", Num: 1})
	if err != nil || path != filepath.Join(artifacts(dir), "spec-1-1-sign-up.md") {
		t.Fatalf("spec %q, %v", path, err)
	}
	spec, err := workflows.ReadSpec(path)
	if err != nil || spec.Status != workflows.SpecDone || spec.BaselineRevision != base || spec.Result == nil || spec.Result.Status != workflows.SpecDone {
		t.Fatalf("spec %+v, %v", spec, err)
	}
	if n := gitOut(t, dir, "rev-list", "--count", base+"..HEAD"); n != "1" {
		t.Fatalf("%s commits after the baseline, want 1", n)
	}
	if dirty := gitOut(t, dir, "status", "--porcelain"); dirty != "" {
		t.Fatalf("tree not clean:\n%s", dirty)
	}
	if files := gitOut(t, dir, "show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, SimWorkDir+"/1-1-sign-up.txt") || strings.Contains(files, "sprint-status.yaml") {
		t.Fatalf("the commit holds:\n%s", files)
	}
}

// Halt after planning stops at ready-for-dev with nothing committed; the
// same spec dispatched by path is implemented.
func TestBuildAutoHaltsAfterPlanningThenResumesByPath(t *testing.T) {
	dir := workerProject(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	if code, out := dispatch(t, dir, "$bmad-build-auto 1-2-account-settings Halt after planning.", ""); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	path := filepath.Join(artifacts(dir), "spec-1-2-account-settings.md")
	spec, err := workflows.ReadSpec(path)
	if err != nil || spec.Status != workflows.SpecReadyForDev || spec.Result == nil || spec.Result.Status != workflows.SpecReadyForDev || spec.BaselineRevision != "" {
		t.Fatalf("after planning %+v, %v", spec, err)
	}
	if head := gitOut(t, dir, "rev-parse", "HEAD"); head != base {
		t.Fatal("planning committed")
	}
	if code, out := dispatch(t, dir, "/bmad-build-auto "+path, ""); code != 0 {
		t.Fatalf("resume: exit %d:\n%s", code, out)
	}
	if spec, err = workflows.ReadSpec(path); err != nil || spec.Status != workflows.SpecDone || spec.BaselineRevision != base {
		t.Fatalf("after the resume %+v, %v", spec, err)
	}
}

// A blocking condition, a death mid-flight and a follow-up recommendation,
// each as the files show them.
func TestBuildAutoBlocksDiesAndRecommendsFollowUp(t *testing.T) {
	dir := workerProject(t)
	base := gitOut(t, dir, "rev-parse", "HEAD")
	if code, _ := dispatch(t, dir, "/bmad-build-auto 2-1-invoices", "blocked=intent gap"); code != 0 {
		t.Fatalf("blocked: exit %d", code)
	}
	spec, err := workflows.ReadSpec(filepath.Join(artifacts(dir), "spec-2-1-invoices.md"))
	if err != nil || spec.Status != workflows.SpecBlocked || spec.Result == nil || spec.Result.BlockingCondition != "intent gap" {
		t.Fatalf("blocked %+v, %v", spec, err)
	}
	if head := gitOut(t, dir, "rev-parse", "HEAD"); head != base {
		t.Fatal("a blocked session committed")
	}
	// blocked=CONDITION@KEY blocks that story alone.
	if code, _ := dispatch(t, dir, "/bmad-build-auto 1-1-sign-up", "blocked=intent gap@2-1"); code != 0 {
		t.Fatalf("another story: exit %d", code)
	}
	if spec, err := workflows.ReadSpec(filepath.Join(artifacts(dir), "spec-1-1-sign-up.md")); err != nil || spec.Status != workflows.SpecDone {
		t.Fatalf("a story blocked=…@2-1 is not for: %+v, %v", spec, err)
	}
	base = gitOut(t, dir, "rev-parse", "HEAD")
	code, out := dispatch(t, dir, "/bmad-build-auto 2-2-refunds", "die=in-progress")
	path := filepath.Join(artifacts(dir), "spec-2-2-refunds.md")
	if spec, err = workflows.ReadSpec(path); code != 1 || err != nil || !spec.DiedMidFlight() || spec.Status != workflows.SpecInProgress || spec.Result != nil {
		t.Fatalf("died: exit %d %+v, %v\n%s", code, spec, err, out)
	}
	if head := gitOut(t, dir, "rev-parse", "HEAD"); head != base {
		t.Fatal("a blocked or dead session committed")
	}
	if code, _ := dispatch(t, dir, "/bmad-build-auto "+path, "followup"); code != 0 {
		t.Fatalf("resume: exit %d", code)
	}
	if spec, err = workflows.ReadSpec(path); err != nil || spec.Status != workflows.SpecDone || !spec.FollowupReviewRecommended || spec.BaselineRevision != base {
		t.Fatalf("resumed %+v, %v", spec, err)
	}
}

// Without uv the launcher fails: no spec, no result file.
func TestBuildAutoWithoutUVLeavesNothing(t *testing.T) {
	dir := workerProject(t)
	t.Setenv("PATH", "/usr/bin:/bin")
	code, out := dispatch(t, dir, "/bmad-build-auto 1-1-sign-up", "")
	if code != 1 || !strings.Contains(out, "uv: command not found") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if dirty := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); dirty != "" {
		t.Fatalf("left:\n%s", dirty)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	realbmad.Cleanup()
	os.Exit(code)
}

// The behaviour a `run --agent sim` child acts out by default runs the
// worker skill when the prompt sends it, as an agent CLI does.
func TestBMADBehaviourRunsTheWorkerItIsSent(t *testing.T) {
	dir := workerProject(t)
	var out bytes.Buffer
	env := map[string]string{"PROJECT_ROOT": dir}
	code := Run(context.Background(), &Sim{Prompt: "/bmad-build-auto 1-1-sign-up\nThe board belongs to the run.", Options: Options{Behaviour: BehaviourBMAD},
		Out: &out, Getenv: func(k string) string { return env[k] }})
	spec, err := workflows.ReadSpec(filepath.Join(artifacts(dir), "spec-1-1-sign-up.md"))
	if code != 0 || err != nil || spec.Status != workflows.SpecDone {
		t.Fatalf("exit %d, spec %+v (%v):\n%s", code, spec, err, out.String())
	}
}

// On the sample (shaped as 6.12, pinned to build-auto, none of BMAD's
// files) the worker runs without BMAD's renderer and without uv.
func TestBuildAutoOnTheSampleNeedsNoRenderer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "greeter")
	if err := sample.WriteBuildAutoSample(dir); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "/usr/bin:/bin")
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "sim", "GIT_AUTHOR_EMAIL": "sim@example.invalid",
		"GIT_COMMITTER_NAME": "sim", "GIT_COMMITTER_EMAIL": "sim@example.invalid"} {
		t.Setenv(k, v)
	}
	gitOut(t, dir, "init", "-q")
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-q", "-m", "sample")
	code, out := dispatch(t, dir, "/bmad-build-auto 1-1-greet-the-world", "")
	spec, err := workflows.ReadSpec(filepath.Join(artifacts(dir), "spec-1-1-greet-the-world.md"))
	if code != 0 || err != nil || spec.Status != workflows.SpecDone || !strings.Contains(out, "without BMAD's renderer") {
		t.Fatalf("exit %d, spec %+v (%v):\n%s", code, spec, err, out)
	}
}

// intentgap: review saves the attempted change as a patch beside the spec,
// reverts the code and blocks the spec naming the patch; the patch applied
// again and the spec dispatched in-review, review takes it to done.
func TestBuildAutoIntentGapSavesAPatchAndRevertsTheCode(t *testing.T) {
	dir := workerProject(t)
	if code, out := dispatch(t, dir, "/bmad-build-auto 1-1-sign-up", "intentgap"); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	path := filepath.Join(artifacts(dir), "spec-1-1-sign-up.md")
	spec, err := workflows.ReadSpec(path)
	if err != nil || spec.Status != workflows.SpecBlocked || spec.Result == nil || spec.Result.BlockingCondition != "intent gap" ||
		!strings.Contains(spec.Result.Text, "_bmad-output/implementation-artifacts/intent-gap-1-1-sign-up.patch") {
		t.Fatalf("spec %+v, %v", spec, err)
	}
	if _, err := os.Stat(filepath.Join(dir, SimWorkDir)); !os.IsNotExist(err) {
		t.Fatalf("the code is not reverted: %v", err)
	}
	patch := filepath.Join(artifacts(dir), "intent-gap-1-1-sign-up.patch")
	gitOut(t, dir, "apply", patch)
	if err := workflows.SetSpecStatus(path, workflows.SpecInReview); err != nil {
		t.Fatal(err)
	}
	if code, out := dispatch(t, dir, "/bmad-build-auto "+path, ""); code != 0 {
		t.Fatalf("review: exit %d\n%s", code, out)
	}
	if spec, err = workflows.ReadSpec(path); err != nil || spec.Status != workflows.SpecDone {
		t.Fatalf("after review %+v, %v", spec, err)
	}
	if files := gitOut(t, dir, "show", "--name-only", "--format=", "HEAD"); !strings.Contains(files, SimWorkDir+"/1-1-sign-up.txt") {
		t.Fatalf("the review's commit holds:\n%s", files)
	}
}

// Free text is a fresh sprint-mode story (BMAD-FACTS §5): a spec slugged
// from its first words, taken to done and committed; blank text halts with
// "unclear intent" and no spec.
func TestBuildAutoTakesFreeTextToDone(t *testing.T) {
	dir := workerProject(t)
	code, out := dispatch(t, dir, "/bmad-build-auto Fix deferred review findings dw-0a1b2c3d, dw-4e5f6071 (listed below)\n- dw-0a1b2c3d: flaky test", "")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	path := filepath.Join(artifacts(dir), "spec-fix-deferred-review-findings-dw-0a1b2c3d.md")
	spec, err := workflows.ReadSpec(path)
	if err != nil || spec.Status != workflows.SpecDone {
		t.Fatalf("spec %s: %+v, %v\n%s", path, spec, err, out)
	}
	if dirty := gitOut(t, dir, "status", "--porcelain"); dirty != "" {
		t.Fatalf("tree not clean:\n%s", dirty)
	}
	code, out = dispatch(t, dir, "/bmad-build-auto  \n", "")
	results, _ := filepath.Glob(filepath.Join(artifacts(dir), "bmad-build-auto-result-*.md"))
	if code != 0 || len(results) != 1 {
		t.Fatalf("blank text: exit %d, results %v\n%s", code, results, out)
	}
}
