package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/modelsim/offline"
)

// A real Codex child (codex exec) that writes a file is seen completed, and
// the Stop hook registered for that one invocation (-c overrides, no user file
// edited, no trust stored) ran: the session state holds its turn stamp.
func TestRealCodexChildIsSeenCompletedAndItsOwnStopHookRan(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "codex", offline.Codex, proofScript, offline.Dialogs{})
	name := p.spawn(p.env, "--agent", "codex", "--prompt", "Please write the proof file.")
	p.expectProof(t, name)
	st, _ := p.run(p.env, "session", "status", name)
	state, _ := st["state"].(map[string]any)
	completion, _ := state["completion"].(map[string]any)
	if completion["excerpt"] != "Wrote proof.txt." {
		t.Fatalf("the child's Stop hook left no stamp in its state: %v", st)
	}
	for _, f := range []string{"hooks.json", "config.toml.story-automator.bak"} {
		if _, err := os.Stat(filepath.Join(p.home, ".codex", f)); !os.IsNotExist(err) {
			t.Fatalf("the user's Codex home was edited: %s (%v)", f, err)
		}
	}
}

// codex exec in a folder Codex does not trust (and that is no git
// repository) shows no dialog: it just runs, and is seen completed.
func TestRealCodexChildInAnUntrustedFolderRuns(t *testing.T) {
	t.Parallel()
	p := newRealAgentProject(t, "codex", offline.Codex, proofScript, offline.Dialogs{TrustFolder: true})
	name := p.spawn(p.env, "--agent", "codex", "--prompt", "Please write the proof file.")
	p.expectProof(t, name)
}
