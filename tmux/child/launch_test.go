package child

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/stophook"
)

func TestProfilesBuildArgvWithThePromptAsOneElement(t *testing.T) {
	prompt := "-rf \"quoted\" $(x) `y`\nline two;"
	cases := map[string][]string{
		agent.AgentClaude: {"claude", "--dangerously-skip-permissions", "--settings", ChildHookSettings("/bin/sa", "StopFailure"), "--model", "opus", "--", prompt},
		agent.AgentCodex: {"codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
			"--dangerously-bypass-hook-trust", "-c", `hooks.Stop=[{hooks=[{type="command",command="/bin/sa stop-hook",timeout=30}]}]`,
			"--model", "opus", "--", prompt},
		agent.AgentGemini: {"gemini", "--yolo", "--model", "opus", "-p", prompt},
		agent.AgentCopilot: {"copilot", "--yolo", "--no-ask-user", "--no-auto-update", "--plugin-dir", "/s/x.sandbox/hook-plugin",
			"--model", "opus", "-p", prompt},
		agent.AgentSim: {"/bin/sa", "agent-sim", "--session-agent", "--model", "opus", "--", prompt},
	}
	for name, want := range cases {
		p, ok := agent.LookupProfile(name)
		if !ok {
			t.Fatalf("no profile %s", name)
		}
		l, err := Build(p, Invocation{Exe: "/bin/sa", Model: "opus", Prompt: prompt, FilesDir: "/s/x.sandbox"})
		if err != nil || !reflect.DeepEqual(l.Argv, want) || l.UseStdin {
			t.Errorf("%s: %q %v, want %q", name, l.Argv, err, want)
		}
	}
}

// A session a person talks to (resolve) starts each CLI so that it stays
// open after its first turn: its profile's Interactive command line.
func TestInteractiveArgvStaysOpenAfterTheFirstTurn(t *testing.T) {
	cases := map[string][]string{
		agent.AgentClaude: {"claude", "--dangerously-skip-permissions", "--settings", ChildHookSettings("/bin/sa", "StopFailure"), "--", "fix it"},
		agent.AgentCodex: {"codex", "--dangerously-bypass-approvals-and-sandbox",
			"--dangerously-bypass-hook-trust", "-c", `hooks.Stop=[{hooks=[{type="command",command="/bin/sa stop-hook",timeout=30}]}]`,
			"--", "fix it"},
		agent.AgentGemini:   {"gemini", "--yolo", "-i", "fix it"},
		agent.AgentOpenCode: {"opencode", "--auto", "--prompt", "fix it"},
	}
	for name, want := range cases {
		p, _ := agent.LookupProfile(name)
		l, err := Build(p, Invocation{Exe: "/bin/sa", Prompt: "fix it", Interactive: true})
		if err != nil || !reflect.DeepEqual(l.Argv, want) {
			t.Errorf("%s: %q %v, want %q", name, l.Argv, err, want)
		}
	}
}

func TestEmptyPromptAddsNothing(t *testing.T) {
	p, _ := agent.LookupProfile(agent.AgentClaude)
	l, _ := Build(p, Invocation{})
	if !reflect.DeepEqual(l.Argv, []string{"claude", "--dangerously-skip-permissions"}) {
		t.Fatalf("%q", l.Argv)
	}
}

func TestCustomTemplate(t *testing.T) {
	p, _ := agent.LookupProfile(agent.AgentCustom)
	prompt := "it's \"hard\" $(rm -rf /)"
	l, err := Build(p, Invocation{Template: `mytool --msg={prompt} -m '{model}' "a b"`, Prompt: prompt, Model: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mytool", "--msg=" + prompt, "-m", "m1", "a b"}; !reflect.DeepEqual(l.Argv, want) || l.UseStdin {
		t.Fatalf("%q", l.Argv)
	}
	l, err = Build(p, Invocation{Template: "tool --file {prompt_file}", Prompt: prompt, PromptFile: "/s/x.prompt"})
	if err != nil || !l.WritePromptFile || !reflect.DeepEqual(l.Argv, []string{"tool", "--file", "/s/x.prompt"}) {
		t.Fatalf("file mode %q %v", l.Argv, err)
	}
	l, err = Build(p, Invocation{Template: "tool --read-stdin", Prompt: prompt})
	if err != nil || !l.UseStdin || l.Stdin != prompt {
		t.Fatalf("stdin mode %+v %v", l, err)
	}
	if _, err := Build(p, Invocation{Template: ""}); err == nil {
		t.Fatal("empty template accepted")
	}
	if _, err := Build(p, Invocation{Template: "x", Prompt: "nul\x00"}); err == nil {
		t.Fatal("NUL accepted")
	}
}

// A Claude child's Stop hook is registered for its session alone, through
// --settings, as this binary's stop-hook quoted for the shell that runs it;
// its StopFailure event runs the same hook.
func TestClaudeChildHookSettings(t *testing.T) {
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if err := json.Unmarshal([]byte(ChildHookSettings("/opt/it's here/sa", "StopFailure")), &settings); err != nil {
		t.Fatal(err)
	}
	// The limit event (a turn that ended in an API error) runs the same hook.
	for _, event := range []string{"Stop", "StopFailure"} {
		hooks := settings.Hooks[event]
		if len(settings.Hooks) != 2 || len(hooks) != 1 || len(hooks[0].Hooks) != 1 {
			t.Fatalf("settings = %+v", settings)
		}
		h := hooks[0].Hooks[0]
		if h.Type != "command" || h.Command != `"/opt/it's here/sa" stop-hook` || h.Timeout <= 0 {
			t.Fatalf("%s hook = %+v", event, h)
		}
	}
}

func TestEveryAgentsSessionVariablesAreClearedForAChild(t *testing.T) {
	// CODEX_THREAD_ID is among Codex's own CODEX_* variables, and still cleared.
	prof, _ := agent.LookupProfile(agent.AgentCodex)
	env := ChildEnv([]string{"CODEX_THREAD_ID=t", "CODEX_HOME=/c", "CLAUDECODE=1", "PATH=/bin"}, prof, EnvPolicy{Pass: []string{"CLAUDECODE"}}, nil)
	if strings.Join(env, " ") != "CODEX_HOME=/c PATH=/bin" {
		t.Fatalf("%q", env)
	}
}

// With story-automator-hook beside the binary, a child's Stop hook runs it
// (quoted, no command word); without, the binary's stop-hook (above).
func TestChildHookRunsTheHookBinaryBesideTheMainOne(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "story-automator")
	hook := filepath.Join(dir, stophook.BinaryName)
	if err := os.WriteFile(hook, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := childHookCommand(exe); got != shellword.MustQuote(hook) {
		t.Fatalf("command %s", got)
	}
	p, _ := agent.LookupProfile(agent.AgentCodex)
	l, err := Build(p, Invocation{Exe: exe, Prompt: "go"})
	if err != nil || !strings.Contains(strings.Join(l.Argv, " "), `command="`+shellword.MustQuote(hook)+`"`) {
		t.Fatalf("%q %v", l.Argv, err)
	}
}

// A Copilot CLI child gets its hook from a plugin folder of its own
// (--plugin-dir), in Copilot CLI 1.0.102's layout: the agentStop event runs
// this tool's hook; the user's settings are never edited.
func TestCopilotChildHookIsAPluginOfItsOwn(t *testing.T) {
	p, _ := agent.LookupProfile(agent.AgentCopilot)
	l, err := Build(p, Invocation{Exe: "/bin/sa", Prompt: "go", FilesDir: "/s/x.sandbox"})
	if err != nil || len(l.Files) != 2 {
		t.Fatalf("%+v %v", l, err)
	}
	files := map[string]string{}
	for _, f := range l.Files {
		files[f.Path] = string(f.Data)
	}
	var manifest struct{ Name string }
	if json.Unmarshal([]byte(files["/s/x.sandbox/hook-plugin/.plugin/plugin.json"]), &manifest) != nil || manifest.Name == "" {
		t.Fatalf("manifest %q", files["/s/x.sandbox/hook-plugin/.plugin/plugin.json"])
	}
	var hooks struct {
		Version int
		Hooks   map[string][]struct {
			Type, Bash string
			TimeoutSec int
		}
	}
	if err := json.Unmarshal([]byte(files["/s/x.sandbox/hook-plugin/hooks/hooks.json"]), &hooks); err != nil {
		t.Fatal(err)
	}
	h := hooks.Hooks["agentStop"]
	if hooks.Version != 1 || len(h) != 1 || h[0].Type != "command" || h[0].Bash != "/bin/sa stop-hook" || h[0].TimeoutSec != agent.HookTimeout {
		t.Fatalf("hooks %+v", hooks)
	}
	if _, err := Build(p, Invocation{Exe: "/bin/sa", Prompt: "go"}); err == nil {
		t.Fatal("a hook plugin with no folder to go in was built")
	}
}
