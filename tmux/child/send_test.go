package child

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/story-automator/story-automator/agent"
)

func TestPasteArrivedNeedsAChangeThePasteExplains(t *testing.T) {
	prompt := "╭──────╮\n│ >    │\n╰──────╯\n"
	claude := agent.PasteOf(agent.AgentClaude).Placeholders
	for _, tc := range []struct {
		what, before, after, text string
		want                      bool
	}{
		{"echoed into the input box", prompt, "╭──────╮\n│ > fix the bug │\n╰──────╯\n", "fix the bug", true},
		{"already on screen, nothing new", "fix the bug\n$ ", "fix the bug\n$ ", "fix the bug", false},
		{"short text already visible", "y/n? y\n", "y/n? y\n", "y", false},
		{"short text typed again", "y/n? y\n", "y/n? y\ny\n", "y", true},
		{"screen moved but not by the paste", "working\n", "working\nstill working\n", "fix the bug", false},
		{"long text wrapped by the pane", "", "…and finally run\nthe tests again\n", "a long request…\nand finally run the tests again", true},
		{"collapsed paste placeholder", prompt, "│ > [Pasted text #1 +40 lines] │\n", "line\nline\nline", true},
		{"old placeholder only", "│ > [Pasted text #1 +40 lines] │\n", "│ > [Pasted text #1 +40 lines] │\n", "other\ntext", false},
		{"another CLI's placeholder", prompt, "│ > [Pasted Text: 40 lines] │\n", "line\nline\nline", false},
		{"blank text that changed the screen", "$ ", "$ \n$ ", "\n", true},
		{"blank text with no change", "$ ", "$ ", "\n", false},
	} {
		if got := pasteArrived(tc.before, tc.after, tc.text, claude); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.what, got, tc.want)
		}
	}
}

// On the real screens of each pinned CLI (tmux/child/testdata/paste), the
// long paste shows only as that CLI's placeholder: it counts as arrived with
// the session's agent profile, and would not with Claude's placeholder alone.
func TestPasteArrivedOnRealAgentScreens(t *testing.T) {
	read := func(name string) string { return readTestdata(t, "paste", name) }
	text := read("pasted.txt")
	for agentName, capture := range map[string]string{agent.AgentClaude: "claude-2.1.328",
		agent.AgentCodex: "codex-0.169.0", agent.AgentGemini: "gemini-0.61.0"} {
		before, after := read(capture+"-before.txt"), read(capture+"-after.txt")
		if !pasteArrived(before, after, text, agent.PasteOf(agentName).Placeholders) {
			t.Errorf("%s: the paste was not seen with its own profile", agentName)
		}
		if !pasteArrived(before, after, text, agent.PasteOf(agent.AgentCustom).Placeholders) {
			t.Errorf("%s: the paste was not seen by a custom session", agentName)
		}
		if agentName != agent.AgentClaude && pasteArrived(before, after, text, agent.PasteOf(agent.AgentClaude).Placeholders) {
			t.Errorf("%s: the paste was seen through Claude's placeholder", agentName)
		}
		if pasteArrived(before, before, text, agent.PasteOf(agentName).Placeholders) {
			t.Errorf("%s: an unchanged screen counted as the paste", agentName)
		}
	}
}

// readTestdata reads testdata/DIR/NAME, failing the test when it cannot.
func readTestdata(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
