package modelsim_test

import (
	"testing"

	"github.com/story-automator/story-automator/modelsim"
	"github.com/story-automator/story-automator/modelsim/offline"
)

var opencodeCLI = agentCLI{"opencode", offline.OpenCode, func(p string) []string { return []string{"run", "--auto", p} }}

// OpenCode's own provider on model-sim's Anthropic endpoint: one shell call
// writes the file and the next answer ends the run.
func TestE2EOpenCodeRunsOneScriptedToolCallThatWritesAFile(t *testing.T) {
	t.Parallel()
	srv := scriptedServer(t, proofScript)
	dir := t.TempDir()
	// OpenCode takes its folder from $PWD, not from the process's working
	// directory: without this its tools ran in the test's package folder.
	run := runAgent(t, opencodeCLI, offline.Config{}, srv, dir, "Write the proof file.", "PWD="+dir)
	checkProof(t, srv, dir, run, modelsim.ProtocolAnthropic)
}
