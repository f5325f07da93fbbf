package child

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
)

// pasteCaptures are real screens of each pinned CLI's interactive input
// box before and after testdata/paste/pasted.txt (12 lines, 1346 bytes) was
// pasted into it by tmux, as `session send` pastes.
var pasteCaptures = map[string]string{
	agent.AgentClaude: "claude-2.1.328",
	agent.AgentCodex:  "codex-0.169.0",
	agent.AgentGemini: "gemini-0.61.0",
}

func readPasteCapture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "paste", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each CLI's own placeholder shows after the paste and not before it, and
// no other CLI's placeholder is mistaken for it (Claude's "[Pasted text"
// and Gemini's "[Pasted Text:" differ only in case).
func TestPastePlaceholdersMatchRealCaptures(t *testing.T) {
	for agentName, capture := range pasteCaptures {
		before := readPasteCapture(t, capture+"-before.txt")
		after := readPasteCapture(t, capture+"-after.txt")
		for other := range pasteCaptures {
			p, _ := agent.LookupProfile(other)
			if p.PastePlaceholder == "" {
				t.Fatalf("%s: no paste placeholder", other)
			}
			shown := strings.Count(after, p.PastePlaceholder) > strings.Count(before, p.PastePlaceholder)
			if shown != (other == agentName) {
				t.Errorf("%s's placeholder %q shown on %s's screen after the paste: %v", other, p.PastePlaceholder, agentName, shown)
			}
		}
	}
}

func TestPasteOfAnAgent(t *testing.T) {
	all := []string{"[Pasted text", "[Pasted Content", "[Pasted Text:"}
	hints := []string{"Type your message or @path/to/file"}
	for agentName, want := range map[string]agent.Paste{
		agent.AgentClaude: {Placeholders: []string{"[Pasted text"}},
		agent.AgentCodex:  {Placeholders: []string{"[Pasted Content"}},
		// An Enter within Gemini CLI's 40 ms of a paste is a newline.
		// Its empty box's hint shows an Enter submitted.
		agent.AgentGemini: {Placeholders: []string{"[Pasted Text:"}, Settle: 250 * time.Millisecond, EmptyHints: hints},
		agent.AgentSim:    {},
		// The CLI behind a custom command or a foreign session is not known.
		agent.AgentCustom: {Placeholders: all, Settle: 250 * time.Millisecond, EmptyHints: hints},
		"":                {Placeholders: all, Settle: 250 * time.Millisecond, EmptyHints: hints},
	} {
		if got := agent.PasteOf(agentName); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v, want %+v", agentName, got, want)
		}
	}
}
