package child

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
)

func TestChildEnvClearsAndSets(t *testing.T) {
	base := []string{"PATH=/bin", "CLAUDECODE=1", "BASH_ENV=/x", "TMUX=/tmp/s,1,0", "TMUX_PANE=%1",
		"CLAUDE_CODE_SESSION_ID=owner", "HOME=/h", "STORY_AUTOMATOR_CHILD=false", "garbage"}
	prof, _ := agent.LookupProfile(agent.AgentClaude)
	env := ChildEnv(base, prof, EnvPolicy{}, map[string]string{EnvChild: "true", EnvSession: "sa-x"})
	got := strings.Join(env, "\n")
	for _, want := range []string{"PATH=/bin", "HOME=/h", "STORY_AUTOMATOR_CHILD=true", "STORY_AUTOMATOR_SESSION=sa-x"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s", want)
		}
	}
	for _, gone := range []string{"CLAUDECODE", "BASH_ENV", "TMUX=", "TMUX_PANE", "CLAUDE_CODE_SESSION_ID", "garbage", "CHILD=false"} {
		if strings.Contains(got, gone) {
			t.Errorf("%s leaked into %q", gone, env)
		}
	}
}

// A child starts from the allow-list: the common variables, its own
// agent's auth and configuration, env.pass; nothing else of the run's
// environment, and never a denied (notify) name, even an allowed one.
func TestChildEnvStartsFromTheAllowList(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/h", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "TMPDIR=/t",
		"https_proxy=http://p:3128", "NO_PROXY=localhost", "GOPATH=/go", "STORY_AUTOMATOR_SIM_DELAY=1s",
		"ANTHROPIC_API_KEY=a", "ANTHROPIC_BASE_URL=http://m", "CLAUDE_CONFIG_DIR=/cc", "IS_SANDBOX=1",
		"OPENAI_API_KEY=o", "GEMINI_API_KEY=g", "GOOGLE_API_KEY=gg",
		"SSH_AUTH_SOCK=/run/agent", "AWS_SECRET_ACCESS_KEY=aws", "NTFY_TOPIC=secret", "GITHUB_TOKEN=gh",
		"MY_SETTING=m", "LANGUAGE=en"}
	for _, tc := range []struct {
		agent     string
		pol       EnvPolicy
		want, not []string
	}{
		{agent.AgentClaude, EnvPolicy{},
			[]string{"PATH", "HOME", "LANG", "LC_ALL", "LANGUAGE", "TERM", "TMPDIR", "https_proxy", "NO_PROXY", "GOPATH",
				"STORY_AUTOMATOR_SIM_DELAY", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR", "IS_SANDBOX"},
			[]string{"OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "NTFY_TOPIC", "GITHUB_TOKEN", "MY_SETTING"}},
		{agent.AgentCodex, EnvPolicy{Pass: []string{"MY_SETTING"}},
			[]string{"PATH", "OPENAI_API_KEY", "MY_SETTING"},
			[]string{"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "IS_SANDBOX", "NTFY_TOPIC"}},
		{agent.AgentGemini, EnvPolicy{Pass: []string{"NTFY_TOPIC", "GITHUB_TOKEN"}, Deny: []string{"NTFY_TOPIC", "GEMINI_API_KEY"}},
			[]string{"GOOGLE_API_KEY", "GITHUB_TOKEN"},
			[]string{"NTFY_TOPIC", "GEMINI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"}},
		{agent.AgentSim, EnvPolicy{},
			[]string{"PATH", "STORY_AUTOMATOR_SIM_DELAY"},
			[]string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "MY_SETTING"}},
		{agent.AgentCustom, EnvPolicy{},
			[]string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "IS_SANDBOX"},
			[]string{"SSH_AUTH_SOCK", "NTFY_TOPIC", "MY_SETTING"}},
	} {
		prof, _ := agent.LookupProfile(tc.agent)
		got := envPairs(ChildEnv(base, prof, tc.pol, nil))
		for _, k := range tc.want {
			if _, ok := got[k]; !ok {
				t.Errorf("%s %+v: %s missing from %v", tc.agent, tc.pol, k, got)
			}
		}
		for _, k := range tc.not {
			if _, ok := got[k]; ok {
				t.Errorf("%s %+v: %s reached the child", tc.agent, tc.pol, k)
			}
		}
	}
}

// A Codex child gets the key variable its config.toml's provider names.
func TestChildEnvPassesTheProviderKeyCodexConfigNames(t *testing.T) {
	home := t.TempDir()
	conf := "model_provider = \"mine\"\n[model_providers.mine]\nenv_key = \"MINE_KEY\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	prof, _ := agent.LookupProfile(agent.AgentCodex)
	base := []string{"CODEX_HOME=" + home, "MINE_KEY=k", "OTHER_KEY=o"}
	got := ChildEnv(base, prof, EnvPolicy{}, nil)
	if !slices.Contains(got, "MINE_KEY=k") || slices.Contains(got, "OTHER_KEY=o") {
		t.Fatalf("%q", got)
	}
	claude, _ := agent.LookupProfile(agent.AgentClaude)
	if got := ChildEnv(base, claude, EnvPolicy{}, nil); slices.Contains(got, "MINE_KEY=k") {
		t.Fatalf("another agent's child got Codex's provider key: %q", got)
	}
	// A custom command may run Codex: it gets the key as it gets Codex's variables.
	custom, _ := agent.LookupProfile(agent.AgentCustom)
	if got := ChildEnv(base, custom, EnvPolicy{}, nil); !slices.Contains(got, "MINE_KEY=k") || slices.Contains(got, "OTHER_KEY=o") {
		t.Fatalf("custom: %q", got)
	}
}

func TestWithVarsKeepsEverythingAndSets(t *testing.T) {
	got := WithVars([]string{"A=1", "PROJECT_ROOT=/p", "TERM=dumb"}, map[string]string{"TERM": "xterm"})
	if strings.Join(got, " ") != "A=1 PROJECT_ROOT=/p TERM=xterm" {
		t.Fatalf("%q", got)
	}
}
