package child

import (
	"slices"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/confine"
)

// Every child is denied the user's credentials under its HOME and the
// workflow's readDeny ("~/" under that HOME), once each; a path holding
// the agent's own state or credentials is left out, so it still signs in.
func TestAChildIsDeniedTheCredentialsAndReadDenyButNotItsOwnState(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"HOME": "/h"}[k] }
	extra := []string{"~/.config/rclone", "/srv/keys/", "~/.ssh", "~/.gemini", "~/.claude.json"}
	for _, name := range agent.CLIAgents() {
		p, _ := agent.LookupProfile(name)
		got := ReadDenied(p, extra, getenv)
		want := append(confine.CredentialPaths("/h"), "/h/.config/rclone", "/srv/keys")
		own := ownPaths(p, getenv)
		for _, x := range []string{"/h/.gemini", "/h/.claude.json"} {
			if !holdsAny(x, own) {
				want = append(want, x)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: denied %q\nwant %q", name, got, want)
		}
		for _, o := range own {
			if holdsAny(o, got) {
				t.Errorf("%s: its own %s is denied", name, o)
			}
		}
	}
	gem, _ := agent.LookupProfile(agent.AgentGemini)
	if got := ReadDenied(gem, []string{"~/.gemini"}, getenv); slices.Contains(got, "/h/.gemini") {
		t.Errorf("Gemini CLI's own state directory is denied: %q", got)
	}
	cl, _ := agent.LookupProfile(agent.AgentClaude)
	if got := ReadDenied(cl, []string{"~/.gemini"}, getenv); !slices.Contains(got, "/h/.gemini") {
		t.Errorf("another agent's state is not Claude Code's own, yet it was left out: %q", got)
	}
}

func TestNoHomeDeniesOnlyTheAbsolutePaths(t *testing.T) {
	p, _ := agent.LookupProfile(agent.AgentCodex)
	got := ReadDenied(p, []string{"~/.x", "/srv/k"}, func(string) string { return "" })
	if !slices.Equal(got, []string{"/srv/k"}) {
		t.Fatalf("%q", got)
	}
}
