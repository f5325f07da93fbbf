package child

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestProfilesBuildArgvWithThePromptAsOneElement(t *testing.T) {
	prompt := "-rf \"quoted\" $(x) `y`\nline two;"
	cases := map[string][]string{
		AgentClaude: {"claude", "--dangerously-skip-permissions", "--settings", ChildHookSettings("/bin/sa"), "--model", "opus", "--", prompt},
		AgentCodex: {"codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
			"--dangerously-bypass-hook-trust", "-c", `hooks.Stop=[{hooks=[{type="command",command="/bin/sa stop-hook",timeout=30}]}]`,
			"--model", "opus", "--", prompt},
		AgentGemini: {"gemini", "--yolo", "--model", "opus", "-p", prompt},
		AgentSim:    {"/bin/sa", "agent-sim", "--session-agent", "--model", "opus", "--", prompt},
	}
	for agent, want := range cases {
		p, ok := LookupProfile(agent)
		if !ok {
			t.Fatalf("no profile %s", agent)
		}
		l, err := p.Build(Invocation{Exe: "/bin/sa", Model: "opus", Prompt: prompt})
		if err != nil || !reflect.DeepEqual(l.Argv, want) || l.UseStdin {
			t.Errorf("%s: %q %v, want %q", agent, l.Argv, err, want)
		}
	}
}

func TestEmptyPromptAddsNothing(t *testing.T) {
	p, _ := LookupProfile(AgentClaude)
	l, _ := p.Build(Invocation{})
	if !reflect.DeepEqual(l.Argv, []string{"claude", "--dangerously-skip-permissions"}) {
		t.Fatalf("%q", l.Argv)
	}
}

func TestProfilesNameTheirScreenHeuristic(t *testing.T) {
	if p, _ := LookupProfile(AgentClaude); p.Screen != ScreenTurnSummary {
		t.Fatalf("claude: %+v", p)
	}
	if p, _ := LookupProfile(AgentCodex); p.Screen != "" {
		t.Fatalf("codex exits when done: %+v", p)
	}
}

func TestCustomTemplate(t *testing.T) {
	p, _ := LookupProfile(AgentCustom)
	prompt := "it's \"hard\" $(rm -rf /)"
	l, err := p.Build(Invocation{Template: `mytool --msg={prompt} -m '{model}' "a b"`, Prompt: prompt, Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mytool", "--msg=" + prompt, "-m", "m1", "a b"}; !reflect.DeepEqual(l.Argv, want) || l.UseStdin {
		t.Fatalf("%q", l.Argv)
	}
	l, err = p.Build(Invocation{Template: "tool --file {prompt_file}", Prompt: prompt, PromptFile: "/s/x.prompt"})
	if err != nil || !l.WritePromptFile || !reflect.DeepEqual(l.Argv, []string{"tool", "--file", "/s/x.prompt"}) {
		t.Fatalf("file mode %q %v", l.Argv, err)
	}
	l, err = p.Build(Invocation{Template: "tool --read-stdin", Prompt: prompt})
	if err != nil || !l.UseStdin || l.Stdin != prompt {
		t.Fatalf("stdin mode %+v %v", l, err)
	}
	if _, err := p.Build(Invocation{Template: ""}); err == nil {
		t.Fatal("empty template accepted")
	}
	if _, err := p.Build(Invocation{Template: "x", Prompt: "nul\x00"}); err == nil {
		t.Fatal("NUL accepted")
	}
}

// A Claude child's Stop hook is registered for its session alone, through
// --settings, as this binary's stop-hook quoted for the shell that runs it.
func TestClaudeChildHookSettings(t *testing.T) {
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if err := json.Unmarshal([]byte(ChildHookSettings("/opt/it's here/sa")), &settings); err != nil {
		t.Fatal(err)
	}
	stop := settings.Hooks["Stop"]
	if len(settings.Hooks) != 1 || len(stop) != 1 || len(stop[0].Hooks) != 1 {
		t.Fatalf("settings = %+v", settings)
	}
	h := stop[0].Hooks[0]
	if h.Type != "command" || h.Command != `"/opt/it's here/sa" stop-hook` || h.Timeout <= 0 {
		t.Fatalf("hook = %+v", h)
	}
}

// The agent lists commands offer come from the table, so a new agent is one entry.
func TestAgentListsComeFromTheTable(t *testing.T) {
	if got := strings.Join(RunAgents(), ","); got != "claude,codex,gemini,sim" {
		t.Errorf("RunAgents = %s", got)
	}
	if got := strings.Join(CLIAgents(), ","); got != "claude,codex,gemini" {
		t.Errorf("CLIAgents = %s", got)
	}
	if got := strings.Join(HookProviders(), ","); got != strings.Join(CLIAgents(), ",") {
		t.Errorf("HookProviders = %s, want every CLI agent", got)
	}
}
