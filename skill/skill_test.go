package skill

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
)

// tree lists every path under root with its content, to compare before and after.
func tree(t *testing.T, root string) string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel += "=" + string(b)
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func TestInstallThenUninstallLeavesTheTreeAsItWas(t *testing.T) {
	for _, provider := range []string{agent.AgentClaude, agent.AgentCodex} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, ".claude", "settings.json"), []byte("{ \"keep\": 1 }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := tree(t, root)
		p, err := Path(provider, Project, root, os.Getenv)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := Install(p, false); err != nil || !r.Changed {
			t.Fatalf("%s install: %+v %v", provider, r, err)
		}
		if b, _ := os.ReadFile(p); !strings.HasPrefix(string(b), "---\nname: story-automator\n") {
			t.Fatalf("%s: skill file %q", provider, b)
		}
		if r, err := Install(p, false); err != nil || r.Changed {
			t.Fatalf("%s second install changed something: %+v %v", provider, r, err)
		}
		if r, err := Uninstall(p, root); err != nil || !r.Changed {
			t.Fatalf("%s uninstall: %+v %v", provider, r, err)
		}
		if after := tree(t, root); after != before {
			t.Fatalf("%s: tree after the round trip\n%s\nwant\n%s", provider, after, before)
		}
	}
}

func TestAFileTheUserWroteIsNeverReplacedOrRemoved(t *testing.T) {
	root := t.TempDir()
	p, _ := Path(agent.AgentClaude, Project, root, os.Getenv)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(p, false); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("install over the user's file: %v", err)
	}
	if _, err := Uninstall(p, root); !errors.Is(err, ErrNotOurs) {
		t.Fatalf("uninstall of the user's file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "mine\n" {
		t.Fatalf("the user's file became %q", b)
	}
}

func TestPathsWhereEachCLIReadsSkills(t *testing.T) {
	env := map[string]string{"HOME": "/h", "CODEX_HOME": "/c"}
	get := func(k string) string { return env[k] }
	for _, c := range []struct{ p, s, want string }{
		{agent.AgentClaude, Project, "/r/.claude/skills/story-automator/SKILL.md"},
		{agent.AgentClaude, User, "/h/.claude/skills/story-automator/SKILL.md"},
		{agent.AgentCodex, Project, "/r/.agents/skills/story-automator/SKILL.md"},
		{agent.AgentCodex, User, "/c/skills/story-automator/SKILL.md"},
		// Copilot CLI reads .agents/skills, where BMAD installs its skills for it, and ~/.copilot/skills.
		{agent.AgentCopilot, Project, "/r/.agents/skills/story-automator/SKILL.md"},
		{agent.AgentCopilot, User, "/h/.copilot/skills/story-automator/SKILL.md"},
	} {
		if got, _ := Path(c.p, c.s, "/r", get); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.p, c.s, got, c.want)
		}
	}
}

func TestProvidersComeFromTheProfileTable(t *testing.T) {
	if got := strings.Join(Providers(), " "); got != "claude codex copilot" || DefaultProvider() != "claude" {
		t.Fatalf("providers %q, default %q", got, DefaultProvider())
	}
	_, err := Path("gemini", Project, "/r", os.Getenv)
	if err == nil || !strings.Contains(err.Error(), "providers: claude, codex, copilot; scopes: project, user") {
		t.Fatalf("an agent with no skill folder: %v", err)
	}
}
