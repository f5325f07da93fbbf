package modelsim_test

import (
	"strings"
	"testing"

	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

func TestE2EGeminiRunsOneScriptedToolCallThatWritesAFile(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, proofScript)
	dir := t.TempDir()
	run := runAgent(t, geminiCLI, offline.Config{}, srv, dir, "Write the proof file.")
	checkProof(t, srv, dir, run, modelsim.ProtocolGemini)
	ex := srv.Exchanges()
	if len(ex) == 0 || !ex[0].Side || !strings.HasSuffix(ex[0].Path, ":generateContent") {
		t.Errorf("first exchange %+v, want the complexity side request", ex)
	}
	for _, e := range ex[1:] {
		if !strings.HasSuffix(e.Path, ":streamGenerateContent?alt=sse") {
			t.Errorf("exchange %d: %s", e.Seq, e.Path)
		}
	}
}

func TestE2EGeminiCrashFaultKillsTheAgent(t *testing.T) {
	t.Parallel()
	_, _, run := agentSimStep(t, runCLIStep(t, geminiCLI), crashFault)
	// Gemini CLI relaunches itself in a child node process, the shell's
	// parent: killing that child makes the command we started exit 1.
	if code := exitCode(run.err); code != 1 {
		t.Errorf("gemini ended with %v, want exit 1 after its worker was killed\n%s%s", run.err, run.out, run.log)
	}
	if strings.Contains(run.out, "Done.") {
		t.Errorf("gemini finished its turn after the crash: %q", run.out)
	}
}

// Without its folder trusted, `gemini -p` refuses to start (exit 55).
func TestE2EGeminiUntrustedFolderExits55(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, proofScript)
	dir := t.TempDir()
	run := runAgent(t, geminiCLI, offline.Config{Leave: offline.Dialogs{TrustFolder: true}}, srv, dir, "Write the proof file.")
	if code := exitCode(run.err); code != 55 {
		t.Errorf("exit %d (%v), want 55\n%s%s", code, run.err, run.out, run.log)
	}
}
