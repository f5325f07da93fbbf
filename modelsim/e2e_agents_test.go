package modelsim_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/story-automator/story-automator/internal/testing/realagent"
	"github.com/story-automator/story-automator/internal/testing/testbin"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
	"github.com/story-automator/story-automator/workflows"
	"github.com/story-automator/story-automator/workflows/sample"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// agentRun is one non-interactive run of a real CLI against a server.
type agentRun struct {
	out  string // what it printed on stdout (its final answer)
	log  string // stderr
	err  error
	home string
}

// agentCLI says how to run one CLI offline and non-interactively.
type agentCLI struct {
	name  string
	setup func(offline.Config) (offline.Env, error)
	argv  func(prompt string) []string
}

var (
	claudeCLI = agentCLI{"claude", offline.Claude, func(p string) []string { return []string{"-p", "--dangerously-skip-permissions", p} }}
	codexCLI  = agentCLI{"codex", offline.Codex, func(p string) []string {
		return []string{"exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", p}
	}}
	geminiCLI = agentCLI{"gemini", offline.Gemini, func(p string) []string { return []string{"--yolo", "-p", p} }}
)

// runAgent runs the CLI with PROMPT in dir, with a private home pointed at srv.
func runAgent(t *testing.T, cli agentCLI, cfg offline.Config, srv *modelsim.Server, dir, prompt string, extra ...string) agentRun {
	t.Helper()
	bin := realagent.Require(t, cli.name)
	cfg.Home, cfg.BaseURL, cfg.Trusted = t.TempDir(), srv.URL(), []string{dir}
	env, err := cli.setup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, cli.argv(prompt)...)
	cmd.Dir = dir
	cmd.Env = append(env.Apply(os.Environ()), extra...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return agentRun{out: stdout.String(), log: stderr.String(), err: err, home: cfg.Home}
}

// runClaude runs `claude -p PROMPT` in dir with a private home pointed at srv.
func runClaude(t *testing.T, srv *modelsim.Server, dir, prompt string, extra ...string) agentRun {
	t.Helper()
	return runAgent(t, claudeCLI, offline.Config{}, srv, dir, prompt, extra...)
}

// toolCalls counts the exchanges that asked the agent to call a tool.
func toolCalls(srv *modelsim.Server) []*modelsim.Call {
	var out []*modelsim.Call
	for _, e := range srv.Exchanges() {
		if e.Call != nil {
			out = append(out, e.Call)
		}
	}
	return out
}

func TestE2EClaudeRunsOneScriptedToolCallThatWritesAFile(t *testing.T) {
	t.Parallel()
	sc, err := modelsim.ParseScript([]byte(`
rules:
  - match: proof
    actions:
      - shell: "printf 'written by claude\n' > proof.txt"
      - reply: "proof.txt is written."
`))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := modelsim.Start(modelsim.Options{Script: sc})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	run := runClaude(t, srv, dir, "Write the proof file.")
	if run.err != nil {
		t.Fatalf("claude: %v\n%s%s", run.err, run.out, run.log)
	}
	if strings.TrimSpace(run.out) != "proof.txt is written." {
		t.Errorf("claude printed %q", run.out)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "proof.txt")); err != nil || string(data) != "written by claude\n" {
		t.Errorf("proof.txt = %q, %v", data, err)
	}
	if calls := toolCalls(srv); len(calls) != 1 {
		t.Errorf("%d tool calls, want 1", len(calls))
	}
	ex := srv.Exchanges()
	for _, e := range ex {
		if e.Protocol != modelsim.ProtocolAnthropic || e.Side || !strings.HasPrefix(e.Path, "/v1/messages") {
			t.Errorf("unexpected exchange %s %s side=%v", e.Method, e.Path, e.Side)
		}
	}
	// Two requests (the prompt, the tool's result), each reporting the default figures.
	u, d := srv.TotalUsage(), modelsim.DefaultUsage
	if len(ex) != 2 || u.InputTokens != 2*d.InputTokens || u.OutputTokens != 2*d.OutputTokens ||
		u.CacheReadTokens != 2*d.CacheReadTokens || u.CacheWriteTokens != 2*d.CacheWriteTokens {
		t.Errorf("%d exchanges with usage %+v, want 2 × %+v", len(ex), u, d)
	}
}

// stepProject writes the sample BMAD project and returns it with the prompt
// of its first story's create step.
func stepProject(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if err := sample.WriteSample(dir); err != nil {
		t.Fatal(err)
	}
	p, err := workflows.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := workflows.ParseStoryKey("1-1")
	prompt, err := p.Prompt(workflows.StepCreate, key, nil, workflows.PromptVars{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, prompt
}

func stepEnv(dir string) []string {
	return []string{"STORY_AUTOMATOR_CHILD=true", "STORY_AUTOMATOR_STEP=create", "STORY_AUTOMATOR_STORY=1-1",
		"STORY_AUTOMATOR_EPIC=1", "PROJECT_ROOT=" + dir}
}

// agentSimStep runs the sample's create step through an agent CLI (start)
// against model-sim, with the step's environment plus extra.
func agentSimStep(t *testing.T, start func(srv *modelsim.Server, dir, prompt string, env ...string) agentRun, extra ...string) (*modelsim.Server, string, agentRun) {
	t.Helper()
	srv, err := modelsim.Start(modelsim.Options{Exe: testbin.Path(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir, prompt := stepProject(t)
	return srv, dir, start(srv, dir, prompt, append(stepEnv(dir), extra...)...)
}

// wantStoryFile checks the step ran and wrote story 1-1's file, and returns its path.
func wantStoryFile(t *testing.T, agent, dir string, run agentRun) string {
	t.Helper()
	if run.err != nil {
		t.Fatalf("%s: %v\n%s\n%s", agent, run.err, run.out, run.log)
	}
	p, _ := workflows.Open(dir)
	key, _ := workflows.ParseStoryKey("1-1")
	f, err := p.StoryFile(key)
	if err != nil {
		t.Fatalf("no story file after the create step: %v\n%s said: %s\n%s", err, agent, run.out, run.log)
	}
	return f
}

// crashFault makes agent-sim kill the agent that runs it in the create step.
const crashFault = "STORY_AUTOMATOR_SIM_FAULTS=crash:create"

func runClaudeStep(t *testing.T) func(srv *modelsim.Server, dir, prompt string, env ...string) agentRun {
	return func(srv *modelsim.Server, dir, prompt string, env ...string) agentRun {
		return runClaude(t, srv, dir, prompt, env...)
	}
}

func runCLIStep(t *testing.T, cli agentCLI) func(srv *modelsim.Server, dir, prompt string, env ...string) agentRun {
	return func(srv *modelsim.Server, dir, prompt string, env ...string) agentRun {
		return runAgent(t, cli, offline.Config{}, srv, dir, prompt, env...)
	}
}

func TestE2EClaudeDoesARunStepThroughAgentSim(t *testing.T) {
	t.Parallel()
	srv, dir, run := agentSimStep(t, runClaudeStep(t))
	f := wantStoryFile(t, "claude", dir, run)
	if data, _ := os.ReadFile(f); !strings.Contains(string(data), "Status: ready-for-dev") {
		t.Errorf("story file %s:\n%s", f, data)
	}
	calls := toolCalls(srv)
	if len(calls) != 1 || !strings.Contains(calls[0].Shell, "agent-sim --behaviour bmad") {
		t.Errorf("tool calls %+v, want one agent-sim call", calls)
	}
	if !strings.Contains(run.out, "wrote ") {
		t.Errorf("final text %q does not pass on what the step did", run.out)
	}
}

// Codex and Gemini CLI do a run step as Claude Code does (above).
func TestE2ECodexAndGeminiDoARunStepThroughAgentSim(t *testing.T) {
	t.Parallel()
	for _, cli := range []agentCLI{codexCLI, geminiCLI} {
		t.Run(cli.name, func(t *testing.T) {
			t.Parallel()
			_, dir, run := agentSimStep(t, runCLIStep(t, cli))
			wantStoryFile(t, cli.name, dir, run)
		})
	}
}

func TestE2EClaudeCrashFaultKillsTheAgent(t *testing.T) {
	t.Parallel()
	_, _, run := agentSimStep(t, runClaudeStep(t), crashFault)
	wantKilled(t, run)
}

// wantKilled checks the agent was killed by SIGKILL: the crash fault's end.
func wantKilled(t *testing.T, run agentRun) {
	t.Helper()
	var exit *exec.ExitError
	if !errors.As(run.err, &exit) {
		t.Fatalf("the agent ended with %v, want it killed\n%s\n%s", run.err, run.out, run.log)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the agent ended %v, want killed by SIGKILL", exit)
	}
}

// exitCode is the exit status in err (0 for nil, -1 for no exit status).
func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	return -1
}
