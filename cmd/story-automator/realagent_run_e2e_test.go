package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/orchestrator"
)

// `run --agent A` with the real CLI against model-sim: every step is a real
// child that does its work through its own shell tool; two stories end done,
// one commit each.
func TestRealClaudeRunFinishesTwoStories(t *testing.T) {
	t.Parallel()
	testRealRun(t, "claude", offline.Claude, false)
}
func TestRealCodexRunFinishesTwoStories(t *testing.T) {
	t.Parallel()
	testRealRun(t, "codex", offline.Codex, false)
}
func TestRealGeminiRunFinishesTwoStories(t *testing.T) {
	t.Parallel()
	testRealRun(t, "gemini", offline.Gemini, false)
}

// In a folder Claude Code does not trust yet, `run --trust-project` answers
// each child's trust dialog for the project, and the run goes on.
func TestRealClaudeRunWithTrustProjectInAnUntrustedFolder(t *testing.T) {
	t.Parallel()
	testRealRun(t, "claude", offline.Claude, true)
}

// A worktree run (--parallel 2): each child works in its story's worktree,
// a folder inside the project the user trusted, so neither Claude Code nor
// Gemini CLI asks a trust question there and the run finishes without
// --trust-project; and the usage of every attempt is read from the agent's
// own record (Gemini CLI files its records by the worktree's folder).
func TestRealClaudeWorktreeRunInATrustedProjectMeetsNoTrustDialog(t *testing.T) {
	t.Parallel()
	expectWorktrees(t, testRealRun(t, "claude", offline.Claude, false, "--parallel", "2"))
}

func TestRealGeminiWorktreeRunInATrustedProjectMeetsNoTrustDialog(t *testing.T) {
	t.Parallel()
	expectWorktrees(t, testRealRun(t, "gemini", offline.Gemini, false, "--parallel", "2"))
}

func TestRealCodexWorktreeRunReadsEveryAttemptsUsage(t *testing.T) {
	t.Parallel()
	expectWorktrees(t, testRealRun(t, "codex", offline.Codex, false, "--parallel", "2"))
}

// expectWorktrees checks that both stories of testRealRun ran in worktrees.
func expectWorktrees(t *testing.T, st *orchestrator.State) {
	t.Helper()
	var worktrees []string
	for _, l := range st.Log {
		if strings.HasPrefix(l.Message, "worktree ") {
			worktrees = append(worktrees, l.Unit)
		}
	}
	if len(worktrees) != 2 {
		t.Fatalf("stories run in worktrees: %v, want 1.1 and 1.2", worktrees)
	}
}

// testRealRun runs two stories with the real agent; untrusted leaves the
// project folder untrusted in the agent's home and passes --trust-project.
// It returns the run's state.
func testRealRun(t *testing.T, agent string, home func(offline.Config) (offline.Env, error), untrusted bool, extra ...string) *orchestrator.State {
	cli := realagent.Require(t, agent)
	srv, err := modelsim.Start(modelsim.Options{Exe: builtBinary(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	p := newRunProject(t)
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	oenv, err := home(offline.Config{Home: agentHome(t, agent), BaseURL: srv.URL(), Trusted: []string{root, p.root},
		Leave: offline.Dialogs{TrustFolder: untrusted}})
	if err != nil {
		t.Fatal(err)
	}
	env := append(oenv.Pairs(), "PATH="+filepath.Dir(cli)+":"+os.Getenv("PATH"))
	args := []string{"run", "--agent", agent, "--epic", "1", "--stories", "1-2", "--json", "--completion-rechecks", "1", "--backoff", "10ms"}
	if untrusted {
		args = append(args, "--trust-project")
	}
	args = append(args, extra...)
	res, code := p.run(env, args...)
	if code != 0 || res["outcome"] != "done" {
		doc := "(no state document)"
		if path := orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root); path != "" {
			if b, err := os.ReadFile(path); err == nil {
				doc = string(b)
			}
		}
		t.Fatalf("run: exit %d %v\nstate:\n%s", code, res, doc)
	}
	commits := p.storyCommits()
	if commits["1-1"] != 1 || commits["1-2"] != 1 {
		t.Fatalf("story commits %v, want one each for 1.1 and 1.2", commits)
	}
	if len(srv.Exchanges()) == 0 {
		t.Fatal("model-sim was never asked: the steps did not go through the agent CLI")
	}
	// The usage recorded from the agent's own records equals what model-sim
	// answered to the agent's turns, token for token (a CLI's side requests,
	// such as Gemini's routing score, are not in its session record).
	st, err := orchestrator.LoadState(orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root))
	if err != nil {
		t.Fatal(err)
	}
	var want modelsim.Usage
	for _, e := range srv.Exchanges() {
		if !e.Side {
			want.InputTokens += e.Usage.InputTokens
			want.OutputTokens += e.Usage.OutputTokens
			want.CacheReadTokens += e.Usage.CacheReadTokens
			want.CacheWriteTokens += e.Usage.CacheWriteTokens
		}
	}
	got := st.Spend()
	if got.Unread != 0 || got.InputTokens != int64(want.InputTokens) || got.OutputTokens != int64(want.OutputTokens) ||
		got.CacheReadTokens != int64(want.CacheReadTokens) || got.CacheWriteTokens != int64(want.CacheWriteTokens) {
		t.Fatalf("%s: recorded usage %+v, model-sim answered %+v", agent, got, want)
	}
	return st
}

// A mixed run: `run --agent codex --fallback-agent claude` where Codex's
// create-story attempt crashes (model-sim kills the codex process from its
// own shell tool): the retry goes to Claude Code, the story completes, and
// the other steps stay with Codex.
func TestRealCodexRunFallsBackToClaudeWhenCodexCrashes(t *testing.T) {
	t.Parallel()
	codex := realagent.Require(t, "codex")
	claude := realagent.Require(t, "claude")
	srv := startModelSim(t, `
rules:
  - match: "Create the story file"
    protocol: openai
    actions: [{fault: crash}]
`)
	p := newRunProject(t)
	root, err := filepath.EvalSymlinks(p.root)
	if err != nil {
		t.Fatal(err)
	}
	home := realHome(t)
	env := []string{"PATH=" + filepath.Dir(codex) + ":" + filepath.Dir(claude) + ":" + os.Getenv("PATH")}
	for _, h := range []func(offline.Config) (offline.Env, error){offline.Claude, offline.Codex} {
		oenv, err := h(offline.Config{Home: home, BaseURL: srv.URL(), Trusted: []string{root, p.root}})
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, oenv.Pairs()...)
	}
	// --sandbox off: the crash fault kills the agent's process from its
	// own shell tool, which a confined shell (a PID namespace of its own)
	// cannot see; confinement is proven in realagent_sandbox_e2e_test.go.
	res, code := p.run(env, "run", "--agent", "codex", "--fallback-agent", "claude", "--epic", "1", "--stories", "1",
		"--json", "--completion-rechecks", "1", "--backoff", "10ms", "--sandbox", "off")
	path := orchestrator.LatestState(marker.NewStore(p.root, func(string) string { return "" }), p.root)
	st, err := orchestrator.LoadState(path)
	if code != 0 || res["outcome"] != "done" || err != nil {
		b, _ := os.ReadFile(path)
		t.Fatalf("run: exit %d %v (%v)\nstate:\n%s", code, res, err, b)
	}
	if c := p.storyCommits(); c["1-1"] != 1 {
		t.Fatalf("story commits %v, want one for 1.1", c)
	}
	agents := map[string][]string{}
	for _, s := range st.Units[0].Steps {
		for _, a := range s.Attempts {
			agents[s.Name] = append(agents[s.Name], a.Agent+"/"+a.FinalState)
		}
	}
	if got := strings.Join(agents["create"], ","); !strings.HasPrefix(got, "codex/") || !strings.HasSuffix(got, ",claude/completed") || strings.HasPrefix(got, "codex/completed") {
		t.Fatalf("create attempts %q, want a failed codex attempt then claude completed (all: %v)", got, agents)
	}
	t.Logf("attempts: %v", agents)
	if got := agents["dev"]; len(got) == 0 || !strings.HasPrefix(got[0], "codex/") {
		t.Fatalf("dev attempts %v, want codex first", got)
	}
}
