package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/orchestrator"
)

// The real Claude Code runs the real bmad-build-auto skill against
// model-sim on a story whose review finds an intent gap (its title says
// so, so model-sim's build-auto script acts it out): the worker saves its
// attempted change as a patch, reverts the code and blocks the spec; the
// run parks the story (done_with_parked). `resolve 1.1 --restore-patch
// --resume` re-applies the patch, sets the spec in-review and resumes: the
// worker, sent the spec's path, reviews the restored change without
// writing the code again, and the story lands with the patch's code.
func TestRealClaudeIntentGapRestoredByPatch(t *testing.T) {
	t.Parallel()
	cli := realagent.Require(t, "claude")
	p, in := newBMAD612ProjectWith(t, strings.Replace(parkEpics, "### Story 1.1: Sign up\n", "### Story 1.1: Sign up (intent gap at review)\n", 1))
	in = withBuildAutoPolicy(t, p, in, "")
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	srv := startModelSim(t, modelsim.BuildAutoScript)
	oenv, err := offline.Claude(offline.Config{Home: realHome(t), BaseURL: srv.URL(), Trusted: []string{root, p.root}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+filepath.Dir(in.UV)+":"+os.Getenv("PATH"))
	const key = "1-1-sign-up-intent-gap-at-review"
	spec := "_bmad-output/implementation-artifacts/spec-" + key + ".md"
	patch := "_bmad-output/implementation-artifacts/intent-gap-" + key + ".patch"

	start := time.Now()
	res, code := p.run(env, "run", "--agent", "claude", "--stories", "1.1", "--json", "--completion-rechecks", "1")
	t.Logf("measured: the run that parks 1.1 took %s wall", time.Since(start).Round(time.Millisecond))
	st := p.state()
	pk := st.Unit("1-1").Parked
	if code != 10 || res["outcome"] != string(orchestrator.OutcomeDoneWithParked) || pk == nil || !strings.Contains(pk.Reason, `"intent gap"`) {
		t.Fatalf("run: exit %d %v, parked %+v\n%s", code, res, pk, p.stateLog())
	}
	if kept := p.git("show", pk.Ref+":"+patch); !strings.Contains(kept, "+++ b/src/greeting.py") {
		t.Fatalf("the ref keeps no patch of the attempted change:\n%s", kept)
	}
	if _, err := os.Stat(filepath.Join(p.root, "src", "greeting.py")); !os.IsNotExist(err) {
		t.Fatalf("the worker's reverted code is in the tree: %v", err)
	}
	writes := greetingWrites(srv.Exchanges())

	start = time.Now()
	out, err := p.cmd(env, "resolve", "1.1", "--restore-patch", "--resume", "--json").CombinedOutput()
	t.Logf("measured: resolve --restore-patch --resume took %s wall", time.Since(start).Round(time.Millisecond))
	first := strings.SplitN(string(out), "\n", 2)[0]
	if err != nil || !strings.Contains(first, `"patch":"`+patch+`"`) || !strings.Contains(first, `"specTo":"in-review"`) {
		t.Fatalf("resolve --restore-patch --resume: %v\n%s\n%s", err, out, p.stateLog())
	}
	if res := lastJSON(t, string(out), ""); res["outcome"] != "done" {
		t.Fatalf("the resumed run: %v\n%s", res, p.stateLog())
	}
	if !promptedWith(srv.Exchanges(), "<command-args>"+spec) {
		t.Errorf("the resumed dispatch did not send the spec's path:\n%s", exchangeSummary(srv.Exchanges()))
	}
	if n := greetingWrites(srv.Exchanges()); writes != 1 || n != writes {
		t.Errorf("the worker wrote src/greeting.py %d times before the resolve and %d after: it implemented again", writes, n-writes)
	}
	checkReviewSubagent(t, "claude", srv.Exchanges(), filepath.Join(root, filepath.FromSlash(spec)))
	sha := strings.TrimSpace(p.git("log", "--format=%H", "--grep=Story-Automator-Story: 1-1", "-1"))
	if files := p.git("show", "--name-only", "--format=", sha); !strings.Contains(files, "src/greeting.py") || !strings.Contains(files, "spec-"+key+".md") {
		t.Errorf("story 1.1's commit holds:\n%s", files)
	}
	if code := p.git("show", "HEAD:src/greeting.py"); !strings.Contains(code, `return "Hello, " + name + "!"`) {
		t.Errorf("the landed code:\n%s", code)
	}
	if commits := p.storyCommits(); commits["1-1"] != 1 {
		t.Errorf("commits %v", commits)
	}
	if s := boardStatus(p.board(), key); s != "done" {
		t.Errorf("board: %s is %q", key, s)
	}
	if dirty := p.git("status", "--porcelain"); strings.TrimSpace(dirty) != "" {
		t.Errorf("the tree is dirty:\n%s", dirty)
	}
	if out := p.validateBoard(in); !strings.Contains(out, `"valid": true`) {
		t.Errorf("BMAD's sprint_plan.py validate refused the board: %s", out)
	}
	dev := p.state().Unit("1-1").Step(orchestrator.StepDev)
	for i, a := range dev.Attempts {
		t.Logf("measured: story 1.1's worker, attempt %d: %dms wall, %dms in the agent", i+1, a.WallMs, a.AgentMs)
	}
	if len(dev.Attempts) != 2 {
		t.Errorf("dev attempts %+v", dev.Attempts)
	}
}

// greetingWrites counts the model's calls that wrote src/greeting.py.
func greetingWrites(ex []modelsim.Exchange) int {
	n := 0
	for _, e := range ex {
		if e.Call != nil && strings.HasSuffix(e.Call.WritePath, "/src/greeting.py") {
			n++
		}
	}
	return n
}
