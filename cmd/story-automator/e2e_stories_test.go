package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/internal/testing/realbmad"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/tmux/tmuxtest"
	"github.com/story-automator/story-automator/workflows"
)

// specAuth is the spec folder of the stories-mode tests, project-relative.
const specAuth = "_bmad-output/specs/spec-auth"

// threeStoriesYAML is the stories.yaml a person hands the caller; extra
// lines go into the entries by id.
func storiesYAML(extra map[string]string) string {
	var b strings.Builder
	for _, s := range []struct{ id, title string }{{"1", "Sign up"}, {"2-a", "Log in"}, {"auth", "Log out"}} {
		b.WriteString("- id: \"" + s.id + "\"\n  title: " + s.title + "\n  description: A person can " + strings.ToLower(s.title) + ".\n")
		b.WriteString(extra[s.id])
	}
	return b.String()
}

// storiesRunProject is a project made by the real BMAD 6.12 installer,
// without a board, with a spec folder (its SPEC.md and the stories.yaml
// given) and a policy, all committed.
func storiesRunProject(t *testing.T, stories, policy string) (*runProject, realbmad.Installed) {
	t.Helper()
	in := realbmad.Require(t)
	root := realbmad.Project(t)
	socket := tmuxtest.Socket(t)
	p := &runProject{t: t, bin: builtBinary(t), root: root, socket: socket, simLog: filepath.Join(t.TempDir(), "sim.jsonl")}
	t.Cleanup(func() { tmuxtest.Shutdown(socket, filepath.Join(root, ".story-automator", "sessions")) })
	files := map[string]string{specAuth + "/SPEC.md": "---\nid: spec-auth\n---\n\n# Accounts\n\nPeople sign up, log in and out.\n",
		specAuth + "/stories.yaml": stories}
	if policy != "" {
		files[".story-automator/workflow.yaml"] = policy
	}
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "spec folder")
	return p, in
}

const noRetro = "steps:\n  retro:\n    enabled: false\n"

// storySubjects are the subjects of the stories' commits, oldest first
// (the retrospective's left out).
func (p *runProject) storySubjects() []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(p.git("log", "--reverse", "--format=%s", "--grep=Story-Automator-Story: ")), "\n") {
		if l != "" && !strings.HasPrefix(l, "epic ") {
			out = append(out, l)
		}
	}
	return out
}

// A run over a spec folder with three stories takes them to done in
// their order, each one commit whose subject carries its id and title,
// no board written; the retrospective takes the folder and its document
// is committed. The dry run and status say stories mode and the folder.
func TestE2EStoriesRunTakesTheFolderToDone(t *testing.T) {
	t.Parallel()
	p, in := storiesRunProject(t, storiesYAML(nil), "")
	var out bytes.Buffer
	c := p.cmd([]string{withUV(in)}, "run", "--dry-run", "--parallel", "2")
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil || !strings.Contains(out.String(), "stories mode, folder "+specAuth) ||
		!strings.Contains(out.String(), "stories mode runs one story at a time") {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	res, code := p.run([]string{withUV(in)}, "run", "--agent", "sim", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("run: exit %d %v\n%s", code, res, p.stateLog())
	}
	want := []string{"1: Sign up", "2-a: Log in", "auth: Log out"}
	if got := p.storySubjects(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("story commits %q, want %q", got, want)
	}
	for id, n := range p.storyCommits() {
		if n != 1 {
			t.Errorf("story %s has %d commits", id, n)
		}
	}
	st := p.state()
	for _, u := range st.Units {
		if u.Kind == orchestrator.KindStory && !strings.HasPrefix(u.Spec, specAuth+"/stories/"+u.Key+"-") {
			t.Errorf("story %s records the spec %q", u.Key, u.Spec)
		}
	}
	retro := st.Unit("epic-spec-auth-retro")
	if retro == nil || retro.Target != specAuth || retro.Retro == nil || retro.Retro.Document != specAuth+"/RETROSPECTIVE.md" {
		t.Fatalf("retrospective %+v", retro)
	}
	if files := p.git("show", "--name-only", "--format=", retro.Commit); !strings.Contains(files, specAuth+"/RETROSPECTIVE.md") {
		t.Fatalf("the retrospective's commit holds:\n%s", files)
	}
	if _, err := os.Stat(p.sprintPath()); !os.IsNotExist(err) {
		t.Fatalf("stories mode wrote a board: %v", err)
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Fatalf("the run left the tree dirty:\n%s", dirty)
	}
	status, code := p.run(nil, "status", "--json")
	if pipe, _ := status["pipeline"].(map[string]any); code != 0 || pipe["mode"] != workflows.StoriesModeText(specAuth) {
		t.Fatalf("status: exit %d %v", code, status)
	}
	logDoneToDispatch(t, st)
}

// spec_checkpoint: the worker halts after planning, the run pauses naming
// the spec; run --resume --replan sets it back to draft and the worker
// plans again (and the run pauses again); run --resume implements it.
func TestE2EStoriesSpecCheckpointAndReplan(t *testing.T) {
	t.Parallel()
	p, in := storiesRunProject(t, storiesYAML(map[string]string{"1": "  spec_checkpoint: true\n  invoke_dev_with: Reuse the mailer.\n"}), noRetro)
	res, code := p.run([]string{withUV(in)}, "run", "--agent", "sim", "--json")
	st := p.state()
	spec := st.Unit("1").Spec
	if code == 0 || st.Escalation == nil || st.Escalation.Code != "plan_review" || spec != specAuth+"/stories/1-sign-up.md" ||
		!strings.Contains(st.Escalation.Action, spec) {
		t.Fatalf("exit %d %v, escalation %+v, spec %q", code, res, st.Escalation, spec)
	}
	if s, err := workflows.ReadSpec(filepath.Join(p.root, spec)); err != nil || s.Status != workflows.SpecReadyForDev {
		t.Fatalf("spec %+v (%v)", s, err)
	}
	if text := readFile(t, filepath.Join(p.root, spec)); !strings.Contains(text, "Reuse the mailer.") {
		t.Fatalf("the worker did not get invoke_dev_with:\n%s", text)
	}
	res, code = p.run([]string{withUV(in)}, "run", "--resume", "--replan", "1", "--json")
	st = p.state()
	dev := st.Unit("1").Step(orchestrator.StepDev)
	if code == 0 || st.Escalation == nil || st.Escalation.Code != "plan_review" || len(dev.Attempts) != 2 || len(p.storyCommits()) != 0 {
		t.Fatalf("replan: exit %d %v, escalation %+v, attempts %d", code, res, st.Escalation, len(dev.Attempts))
	}
	if !strings.Contains(p.stateLog(), "the spec is back to draft") {
		t.Fatalf("the replan is not in the log:\n%s", p.stateLog())
	}
	res, code = p.run([]string{withUV(in)}, "run", "--resume", "--json")
	if code != 0 || res["outcome"] != "done" {
		t.Fatalf("resume: exit %d %v\n%s", code, res, p.stateLog())
	}
	if s, _ := workflows.ReadSpec(filepath.Join(p.root, spec)); s.Status != workflows.SpecDone || len(p.storySubjects()) != 3 {
		t.Fatalf("spec %q, commits %v", s.Status, p.storySubjects())
	}
}

// done_checkpoint: the run pauses after the story lands (done_review),
// not after the last story; run --resume goes on.
func TestE2EStoriesDoneCheckpointPausesAfterLanding(t *testing.T) {
	t.Parallel()
	p, in := storiesRunProject(t, storiesYAML(map[string]string{"1": "  done_checkpoint: true\n", "auth": "  done_checkpoint: true\n"}), noRetro)
	res, code := p.run([]string{withUV(in)}, "run", "--agent", "sim", "--json")
	st := p.state()
	if code == 0 || st.Escalation == nil || st.Escalation.Code != "done_review" || !strings.Contains(st.Escalation.Action, "run --resume") ||
		strings.Join(p.storySubjects(), "|") != "1: Sign up" || st.Unit("1").Status != orchestrator.StatusDone {
		t.Fatalf("exit %d %v, escalation %+v, commits %v", code, res, st.Escalation, p.storySubjects())
	}
	if len(st.Unit("2-a").Step(orchestrator.StepDev).Attempts) != 0 {
		t.Fatal("the next story started before the review")
	}
	res, code = p.run([]string{withUV(in)}, "run", "--resume", "--json")
	if code != 0 || res["outcome"] != "done" || len(p.storySubjects()) != 3 {
		t.Fatalf("resume: exit %d %v, commits %v\n%s", code, res, p.storySubjects(), p.stateLog())
	}
}

// A blocked story parks naming its spec and the fix, and the run never
// goes past it (each story depends on the one before): it ends
// done_with_parked with the later stories not started. A worker's
// skeleton spec parks its story naming the file. Under --on-escalation
// pause the blocked story pauses the run instead.
func TestE2EStoriesBlockedAndSentinelEscalate(t *testing.T) {
	t.Parallel()
	p, in := storiesRunProject(t, storiesYAML(nil), noRetro)
	res, code := p.run([]string{withUV(in), agentsim.EnvBuildAuto + "=blocked=unclear intent@2-a"}, "run", "--agent", "sim", "--json")
	st := p.state()
	pk := st.Unit("2-a").Parked
	if code != 10 || res["outcome"] != "done_with_parked" || st.Unit("2-a").Status != orchestrator.StatusParked || pk == nil ||
		pk.Code != "build_auto_blocked" || !strings.Contains(pk.Reason, `"unclear intent"`) || !strings.Contains(pk.Action, specAuth+"/stories/2-a-log-in.md") {
		t.Fatalf("blocked: exit %d %v, unit 2-a %+v", code, res, st.Unit("2-a"))
	}
	if len(st.Unit("auth").Step(orchestrator.StepDev).Attempts) != 0 || st.Unit("auth").Status != orchestrator.StatusPending ||
		strings.Join(p.storySubjects(), "|") != "1: Sign up" {
		t.Fatalf("the run went past the blocked story: %v", p.storySubjects())
	}

	q, _ := storiesRunProject(t, storiesYAML(nil), noRetro)
	skeleton := specAuth + "/stories/2-a-unresolved.md"
	if err := os.MkdirAll(filepath.Join(q.root, specAuth, "stories"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(q.root, skeleton), []byte("---\nstatus: blocked\n---\n\n# Story 2-a\n\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: story id not found in stories.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q.git("add", "-A")
	q.git("commit", "-q", "-m", "a skeleton from an earlier run")
	res, code = q.run([]string{withUV(in)}, "run", "--agent", "sim", "--on-escalation", "pause", "--json")
	esc := q.state().Escalation
	if code == 0 || code == 10 || esc == nil || !strings.Contains(esc.Reason, skeleton) || !strings.Contains(esc.Reason, "story id not found in stories.yaml") ||
		!strings.Contains(esc.Action, "delete "+skeleton) {
		t.Fatalf("sentinel: exit %d %v, escalation %+v", code, res, esc)
	}
}

// A broken stories.yaml is refused with its file, line and rule, nothing
// started; two spec folders without --spec are refused with their list.
func TestE2EStoriesRefusedBeforeAnythingStarts(t *testing.T) {
	t.Parallel()
	p, in := storiesRunProject(t, storiesYAML(map[string]string{"2-a": "  status: done\n"}), "")
	res, code := p.run([]string{withUV(in)}, "run", "--agent", "sim", "--json")
	if code == 0 || res["error"] != "stories_invalid" || !strings.Contains(stringOr(res["message"]), "stories.yaml:7: no status field") {
		t.Fatalf("invalid: exit %d %v", code, res)
	}
	p.assertUntouched()

	q, _ := storiesRunProject(t, storiesYAML(nil), "")
	other := filepath.Join(q.root, "_bmad-output", "planning-artifacts", "spec-billing", "stories.yaml")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte(storiesYAML(nil)), 0o644); err != nil {
		t.Fatal(err)
	}
	q.git("add", "-A")
	q.git("commit", "-q", "-m", "a second spec folder")
	res, code = q.run([]string{withUV(in)}, "run", "--agent", "sim", "--json")
	if code == 0 || res["error"] != "spec_folder_ambiguous" || !strings.Contains(stringOr(res["message"]), specAuth) ||
		!strings.Contains(stringOr(res["message"]), "_bmad-output/planning-artifacts/spec-billing") || !strings.Contains(stringOr(res["action"]), "--spec") {
		t.Fatalf("two folders: exit %d %v", code, res)
	}
	q.assertUntouched()
	res, code = q.run([]string{withUV(in)}, "run", "--spec", "_bmad-output/planning-artifacts/spec-billing", "--dry-run", "--json")
	if pipe, _ := res["pipeline"].(map[string]any); code != 0 || pipe["mode"] != workflows.StoriesModeText("_bmad-output/planning-artifacts/spec-billing") {
		t.Fatalf("--spec: exit %d %v", code, res)
	}
}
