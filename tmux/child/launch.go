package child

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/internal/shellword"
	"github.com/story-automator/story-automator/internal/tomledit"
	"github.com/story-automator/story-automator/stophook"
)

// Invocation is what varies per spawn.
type Invocation struct {
	Exe      string // this binary, for sim
	Model    string
	Prompt   string
	Template string // custom only: the command template
	// PromptFile is where the prompt is written when a template asks for {prompt_file}.
	PromptFile string
	// Confine, when set, starts the agent inside its CLI's own sandbox
	// (Profile.Sandbox); nil = unconfined (--sandbox off, or no sandbox).
	Confine *Confine
	// FilesDir is the child's own folder for files its start needs (a
	// hook plugin: agent.ChildHookPluginDir), removed when it ends.
	FilesDir string
	// Interactive starts the CLI for a person to talk to: its profile's
	// Interactive command line, open after the first turn.
	Interactive bool
}

// Launch is the agent's command line and how its prompt travels.
type Launch struct {
	Argv []string
	// Stdin, when UseStdin, is written to the agent's standard input, then closed.
	Stdin    string
	UseStdin bool
	// WritePromptFile asks the spawner to write the prompt to Invocation.PromptFile.
	WritePromptFile bool
	// Files are per-child files to write before the start (a sandbox's
	// settings and policy); Env are variables added to the child's.
	Files []File
	Env   map[string]string
	// Wrap, when set, runs the whole argv inside this tool's bubblewrap
	// with this policy (agent.HideWrap; the spawner wraps it).
	Wrap *confine.Policy
}

// setEnv adds a variable to the child's.
func (l *Launch) setEnv(key, value string) {
	if l.Env == nil {
		l.Env = map[string]string{}
	}
	l.Env[key] = value
}

// Build makes the argv of agent p; the prompt is always one argv element,
// stdin or a file, never part of a shell string.
func Build(p agent.Profile, inv Invocation) (Launch, error) {
	if strings.ContainsRune(inv.Prompt, 0) {
		return Launch{}, fmt.Errorf("the prompt contains a NUL byte")
	}
	if p.Name == agent.AgentCustom {
		l, err := buildTemplate(inv)
		if err == nil && inv.Confine != nil && p.Sandbox.Kind != "" {
			confinedLaunch(p.Sandbox, inv.Confine, &l)
		}
		return l, err
	}
	prog := p.Program
	if p.RunsThisBinary() {
		prog = inv.Exe
	}
	if prog == "" {
		return Launch{}, fmt.Errorf("agent %s: no program", p.Name)
	}
	confine := inv.Confine
	if p.Sandbox.Kind == "" {
		confine = nil
	}
	args, promptFlag := p.ArgsFor(confine != nil), p.PromptFlag
	if inv.Interactive {
		args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return slices.Contains(p.Interactive.Drop, a) })
		if p.Interactive.PromptFlag != "" {
			promptFlag = p.Interactive.PromptFlag
		}
	}
	l := Launch{Argv: append([]string{prog}, args...)}
	switch {
	case p.Sandbox.Kind == agent.SandboxClaudeSettings && confine != nil:
		// One --settings carries the hook and the sandbox.
		l.Argv = append(l.Argv, "--settings", claudeSettings(inv.Exe, hookEvents(p), confine))
	case p.ChildHook == agent.ChildHookPluginDir && inv.Exe != "":
		if inv.FilesDir == "" {
			return Launch{}, fmt.Errorf("agent %s: no folder for its hook plugin", p.Name)
		}
		dir := filepath.Join(inv.FilesDir, "hook-plugin")
		l.Argv = append(l.Argv, "--plugin-dir", dir)
		l.Files = append(l.Files, hookPlugin(dir, p.HookEvent, inv.Exe)...)
	case inv.Exe != "":
		l.Argv = append(l.Argv, childHookArgs(p, inv.Exe)...)
	}
	if confine != nil {
		confinedLaunch(p.Sandbox, confine, &l)
	}
	if inv.Model != "" && p.ModelFlag != "" {
		l.Argv = append(l.Argv, p.ModelFlag, inv.Model)
	}
	if inv.Prompt != "" {
		l.Argv = append(l.Argv, promptFlag, inv.Prompt)
	}
	return l, nil
}

// Template placeholders of the custom agent.
const (
	PlaceholderPrompt     = "{prompt}"
	PlaceholderPromptFile = "{prompt_file}"
	PlaceholderModel      = "{model}"
)

func buildTemplate(inv Invocation) (Launch, error) {
	words, err := shellword.Split(inv.Template)
	if err != nil {
		return Launch{}, fmt.Errorf("custom command: %w", err)
	}
	if len(words) == 0 {
		return Launch{}, fmt.Errorf("custom agent needs --command")
	}
	var l Launch
	usesPrompt := false
	for _, w := range words {
		if strings.Contains(w, PlaceholderPrompt) {
			usesPrompt = true
		}
		if strings.Contains(w, PlaceholderPromptFile) {
			usesPrompt, l.WritePromptFile = true, true
		}
		// One template word stays one argv element, whatever the prompt holds.
		w = strings.ReplaceAll(w, PlaceholderPromptFile, inv.PromptFile)
		w = strings.ReplaceAll(w, PlaceholderModel, inv.Model)
		w = strings.ReplaceAll(w, PlaceholderPrompt, inv.Prompt)
		l.Argv = append(l.Argv, w)
	}
	if l.WritePromptFile && inv.PromptFile == "" {
		return Launch{}, fmt.Errorf("custom command uses %s but no prompt file path was given", PlaceholderPromptFile)
	}
	if !usesPrompt {
		l.Stdin, l.UseStdin = inv.Prompt, true
	}
	return l, nil
}

// childHookCommand is the shell command that runs exe's Stop hook
// (stophook.Program: the hook's own program when it sits beside exe).
func childHookCommand(exe string) string {
	argv := stophook.Program(exe)
	return strings.Join(append([]string{shellword.MustQuote(argv[0])}, argv[1:]...), " ")
}

// ChildHookSettings is the settings JSON that registers exe's Stop hook
// for one child session, and for each of extra (the agent's limit event)
// the same hook.
func ChildHookSettings(exe string, extra ...string) string {
	return claudeSettings(exe, append([]string{"Stop"}, extra...), nil)
}

// hookEvents are the events a child's hook is registered for: Stop, and
// the profile's limit event when it has one.
func hookEvents(p agent.Profile) []string { return []string{"Stop", p.Limits.HookEvent} }

// childHookArgs are the arguments that register exe's Stop hook (and the
// profile's limit event) for the one session being started, the way the
// agent's profile names (none for "").
func childHookArgs(p agent.Profile, exe string) []string {
	switch p.ChildHook {
	case agent.ChildHookSettingsFlag:
		return []string{"--settings", ChildHookSettings(exe, p.Limits.HookEvent)}
	case agent.ChildHookConfigFlag:
		return codexChildHook(exe)
	}
	return nil
}

// hookPlugin is a plugin folder (Copilot CLI 1.0.102's layout:
// .plugin/plugin.json and hooks/hooks.json) that registers exe's Stop hook
// on event for the one child given it by --plugin-dir.
func hookPlugin(dir, event, exe string) []File {
	manifest, _ := json.Marshal(map[string]any{"name": "story-automator-child-hook", "version": "1.0.0",
		"description": "story-automator's Stop hook for this one child session"})
	hooks, _ := json.Marshal(map[string]any{"version": 1, "hooks": map[string]any{
		event: []any{map[string]any{"type": "command", "bash": childHookCommand(exe), "timeoutSec": agent.HookTimeout}}}})
	return []File{{filepath.Join(dir, ".plugin", "plugin.json"), append(manifest, '\n')},
		{filepath.Join(dir, "hooks", "hooks.json"), append(hooks, '\n')}}
}

// codexChildHook registers the Stop hook as a -c override of the hooks table
// (Codex 0.169 reads hooks from config layers, the command line being one).
// A hook from the command line has no persisted trust, so this one
// invocation runs enabled hooks without it (--dangerously-bypass-hook-trust):
// hooks run outside the child's sandbox either way, and the user's own
// hooks it may also run are hooks the user configured.
func codexChildHook(exe string) []string {
	cmd := tomledit.String(childHookCommand(exe))
	return []string{"--dangerously-bypass-hook-trust",
		"-c", fmt.Sprintf("hooks.Stop=[{hooks=[{type=\"command\",command=%s,timeout=%d}]}]", cmd, agent.HookTimeout)}
}
