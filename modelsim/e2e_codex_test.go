package modelsim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/testing/testbin"
	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

const proofScript = `
rules:
  - match: proof
    actions:
      - shell: "printf 'written by the agent\n' > proof.txt"
      - reply: "proof.txt is written."
`

// checkProof checks one tool call wrote proof.txt and the turn took two
// requests, each reporting usage.
func checkProof(t *testing.T, srv *modelsim.Server, dir string, run agentRun, protocol string) {
	t.Helper()
	if run.err != nil {
		t.Fatalf("agent: %v\n%s\n%s", run.err, run.out, run.log)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "proof.txt")); err != nil || string(data) != "written by the agent\n" {
		t.Errorf("proof.txt = %q, %v\n%s", data, err, run.log)
	}
	if calls := toolCalls(srv); len(calls) != 1 {
		t.Errorf("%d tool calls, want 1", len(calls))
	}
	if !strings.Contains(run.out, "proof.txt is written.") {
		t.Errorf("final answer %q", run.out)
	}
	main := 0
	for _, e := range srv.Exchanges() {
		if e.Protocol != protocol {
			t.Errorf("exchange %s %s is not %s", e.Method, e.Path, protocol)
		}
		if !e.Side {
			main++
			if e.Usage == (modelsim.Usage{}) {
				t.Errorf("exchange %d reported no usage", e.Seq)
			}
		}
	}
	if main != 2 {
		t.Errorf("%d main requests, want 2", main)
	}
}

func scriptedServer(t *testing.T, text string) *modelsim.Server {
	t.Helper()
	sc, err := modelsim.ParseScript([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := modelsim.Start(modelsim.Options{Script: sc, Exe: testbin.Path(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// Codex's default model works in code mode (the shell reached from "exec").
func TestE2ECodexRunsOneScriptedToolCallThatWritesAFile(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, proofScript)
	dir := t.TempDir()
	run := runAgent(t, codexCLI, offline.Config{}, srv, dir, "Write the proof file.")
	checkProof(t, srv, dir, run, modelsim.ProtocolOpenAI)
	// Codex reports input without the cache-write share it has no field for.
	d := modelsim.DefaultUsage
	want := modelsim.Usage{InputTokens: 2 * (d.InputTokens + d.CacheWriteTokens), OutputTokens: 2 * d.OutputTokens, CacheReadTokens: 2 * d.CacheReadTokens}
	if got := srv.TotalUsage(); got != want {
		t.Errorf("usage %+v, want %+v", got, want)
	}
}

// A model Codex does not know gets exec_command as a plain function tool.
func TestE2ECodexWithFunctionToolsRunsTheCall(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, proofScript)
	dir := t.TempDir()
	run := runAgent(t, codexCLI, offline.Config{Model: "model-sim"}, srv, dir, "Write the proof file.")
	checkProof(t, srv, dir, run, modelsim.ProtocolOpenAI)
}

func TestE2ECodexCrashFaultKillsTheAgent(t *testing.T) {
	t.Parallel()
	_, _, run := agentSimStep(t, runCLIStep(t, codexCLI), crashFault)
	wantKilled(t, run)
}
