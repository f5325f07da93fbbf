// Package agent is the table of agent CLIs this tool drives: how each starts, what it shows, and the facts other packages read instead of naming one.
package agent

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Profile is how one kind of agent is started and how its completion shows
// on screen. Profiles are data: adding an agent is adding a table entry.
type Profile struct {
	Name string
	// Program is the executable; empty for sim (this binary) and custom (the template).
	Program string
	// Args come first, before the model and the prompt.
	Args []string
	// ModelFlag precedes --model's value ("--model", "-m"); empty = no model flag.
	ModelFlag string
	// PromptFlag precedes the prompt argument: "--" (end of options) or a flag such as "-p".
	PromptFlag string
	// SkillForm is how a prompt makes this CLI, started as a child is,
	// run an installed skill: {skill} and {args} are replaced (SkillPrompt);
	// "" = it cannot be told to.
	SkillForm string
	// Screen names the screen completion heuristic monitor-session applies
	// to this agent's pane (ScreenTurnSummary), or "" when its exit is the signal.
	Screen string
	// Env is added to the child's environment.
	Env map[string]string
	// RunEnv is added to the environment of a story run's child, for each
	// variable the run's own environment does not set.
	RunEnv map[string]string
	// HostEnv names the variables of the run's own environment that a
	// child on an ssh host gets too, so the agent acts there as it does
	// here (the simulated agent's settings; never a path of this machine).
	HostEnv []string
	// ChildHook names how this tool's Stop hook is registered for the one
	// session being started, so the user's settings files are never edited
	// (ChildHookSettingsFlag, ChildHookConfigFlag); "" = it is not.
	ChildHook string
	// MinVersion is the oldest CLI version supported ("" = any); Install is
	// the command that installs a supported one; Package is its npm package,
	// whose package.json tells the installed version without starting it.
	MinVersion, Install, Package string
	// Dialogs are the screens at which this CLI waits for a person.
	Dialogs []Dialog
	// ExitDialogs map an exit code to the dialog it means: a CLI that refuses
	// to start until the user settles something (Gemini's untrusted folder).
	ExitDialogs map[int]Dialog
	// TrustEnv trusts the child's folder for that one child, for a CLI that
	// reads its trust from the environment; it is added only when the user
	// asked to trust the project (--trust-project).
	TrustEnv map[string]string
	// Usage names the reader of the agent's own record of its usage (its
	// transcript, session log or stats); "" = the agent reports none.
	Usage UsageFormat
	// RecordEnd is what the agent writes last to the record its hook names
	// (the transcript) as it shuts down: a session is closed only once it
	// is there, or the record is not whole ("" = the record settles when it
	// stops growing).
	RecordEnd string
	// RootEnv is the variable (NAME=value) without which the CLI refuses
	// to run unattended as root; doctor checks it.
	RootEnv string
	// PastePlaceholder starts what the CLI's input box shows instead of a
	// long paste, so a send can tell its text arrived (read from real
	// captures, testdata/paste); "" = the CLI shows the text itself.
	PastePlaceholder string
	// PasteSettle is how long after a paste the CLI still takes a key as
	// part of it, so a send waits that long before pressing Enter.
	PasteSettle time.Duration
	// EmptyInputHint is what the CLI's input box shows while it is empty;
	// when a send's paste replaced it, its return shows the Enter submitted
	// (tmux/child/send_submit.go); "" = the box shows no such hint.
	EmptyInputHint string
	// Limits are how the CLI shows it gave up at a usage limit, a rate
	// limit or an API fault (agent/limits.go).
	Limits Limits

	// Sandbox is how the CLI confines its own tools (agent/sandbox.go).
	Sandbox Sandbox

	// Subagents is how the CLI's model runs subagents its turn waits for
	// (subagents.go).
	Subagents Subagents

	// Interactive is how the CLI starts for a person who talks to it
	// (`resolve`): a session that stays open after its first turn.
	Interactive Interactive

	// Agent facts other packages read instead of naming the agent.
	Facts
}

// Facts are what doctor, spend, skill and the environment handling know of
// an agent CLI, as data: code elsewhere switches on a format name here,
// never on the agent's name.
type Facts struct {
	// StateDir is where the CLI keeps its state, relative to HOME (".codex");
	// StateDirEnv, when set in the environment, replaces it ("CODEX_HOME").
	StateDir, StateDirEnv string
	// AuthEnv are the variables any of which gives the CLI credentials, in
	// the order doctor names them; AuthFiles hold them (relative to the
	// state directory). AuthConfig names a config format whose selected
	// provider may name one more variable ("model-provider-toml"). AuthFix is
	// what to do without credentials.
	AuthEnv, AuthFiles  []string
	AuthConfig, AuthFix string
	// TrustFormat names how the CLI records the folders it trusts
	// ("projects-json", "trusted-folders-json"), kept in TrustFile
	// ("~/" = HOME, else relative to the state directory); "" = it never
	// asks, as TrustNote says.
	TrustFormat, TrustFile, TrustNote string
	// SessionEnv are the variables the CLI sets in its own session (its
	// nesting guard, its session id): never passed on to a child.
	SessionEnv []string
	// PassEnv are the variables of the run's environment the CLI reads for
	// its auth and configuration, which its child gets beyond the common
	// allow-list ("X_*" is every name that starts with X_). PassEveryAgent:
	// the child gets every CLI agent's (a custom command may run any).
	PassEnv        []string
	PassEveryAgent bool
	// ProjectDirEnv is the variable the CLI gives its hooks with the
	// project's directory ("" = none).
	ProjectDirEnv string
	// SkillDirs are where the CLI reads skills, by scope ("project":
	// relative to the project root, "user": to the state directory, or
	// "~/" = HOME); nil = it reads none this tool installs.
	SkillDirs map[string]string
	// SkillNeeds are programs the CLI's skill tool runs, which it
	// downloads when PATH has none (OpenCode's ripgrep): offline or
	// confined that fails and no skill loads; doctor checks them.
	SkillNeeds []string
	// Default marks the agent a run, doctor and `skill install` take when
	// none is named (one profile).
	Default bool
	// Product is the CLI's name as a user knows it, for messages.
	Product string
	// HookFiles are the settings files `hooks install` can put this
	// tool's hook in, one a scope, in the order `hooks status` reports
	// them; nil = its children need none (their exit ends a step).
	// The rest of the Hook facts say how that hook is written and run.
	HookFiles []HookFile
	// HookEvent is the event whose hook ends the CLI's turn, sending a
	// "block" reason back as the next prompt ("Stop").
	HookEvent string
	// HookMillis: the CLI reads a hook's timeout in milliseconds, not seconds.
	HookMillis bool
	// HookSwitches names the settings keys with which the CLI turns an
	// installed hook off ("hooks-config"); "" = none.
	HookSwitches string
	// HookTrust names the step without which the CLI does not run an
	// installed hook ("config-toml-hash": hooks on in the state
	// directory's config.toml and each entry's hash, as the Program's
	// app-server lists it, trusted there); "" = it runs any.
	HookTrust string
	// HookProjectNote is what a project-scope install tells the user.
	HookProjectNote string
	// HookRefusal says why `hooks install` has nothing to install for a
	// CLI whose sessions no hook can hold ("" = it has a hook, or none is asked of it).
	HookRefusal string
	// HookFlat: the hook's entries sit right under the event, {"type":
	// "command", "bash": CMD, "timeoutSec": N}, not in groups of "hooks".
	HookFlat bool
}

// HookFile is one settings file that can hold the hook: Path is relative
// to the project root for the project and local scopes; for the user
// scope, to the state directory, or, after "$NAME/", to $NAME (HOME when
// NAME is unset).
type HookFile struct{ Scope, Path string }

// Hook setting formats and trust steps of Facts.
const (
	HookSwitchesConfig = "hooks-config"
	HookTrustTOMLHash  = "config-toml-hash"
)

// StateHome is the agent's state directory under the environment getenv reads.
func (p Profile) StateHome(getenv func(string) string) string {
	if p.StateDirEnv != "" {
		if h := getenv(p.StateDirEnv); h != "" {
			return h
		}
	}
	return filepath.Join(getenv("HOME"), p.StateDir)
}

// StatePath resolves a path of the agent's: "~/x" is under HOME, anything
// else under its state directory.
func (p Profile) StatePath(rel string, getenv func(string) string) string {
	if r, ok := strings.CutPrefix(rel, "~/"); ok {
		return filepath.Join(getenv("HOME"), r)
	}
	return filepath.Join(p.StateHome(getenv), rel)
}

// SessionVars are every agent's session variables, sorted.
func SessionVars() []string {
	var out []string
	for _, n := range AgentNames() {
		out = append(out, profiles[n].SessionEnv...)
	}
	sort.Strings(out)
	return out
}

// PassProfiles are the profiles whose variables a child of p gets: p's
// own, or every CLI agent's for a command that may run any of them.
func (p Profile) PassProfiles() []Profile {
	if !p.PassEveryAgent {
		return []Profile{p}
	}
	var out []Profile
	for _, n := range CLIAgents() {
		out = append(out, profiles[n])
	}
	return out
}

// PassVars are the variables of the run's environment p's child gets
// beyond the common allow-list, sorted: PassEnv (of every CLI agent for
// PassEveryAgent), the name of RootEnv and the state directory's variable.
// A name ending in * stands for every name with that prefix.
func (p Profile) PassVars() []string {
	var out []string
	for _, q := range p.PassProfiles() {
		out = append(out, q.PassEnv...)
		if name, _, ok := strings.Cut(q.RootEnv, "="); ok {
			out = append(out, name)
		}
		if q.StateDirEnv != "" {
			out = append(out, q.StateDirEnv)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// ProjectDirVars are the variables agents give their hooks with the project directory, sorted.
func ProjectDirVars() []string {
	var out []string
	for _, n := range AgentNames() {
		if v := profiles[n].ProjectDirEnv; v != "" {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// DefaultAgent is the agent a run, doctor and `skill install` take when
// none is named.
func DefaultAgent() string {
	for _, n := range AgentNames() {
		if profiles[n].Default {
			return n
		}
	}
	return ""
}

// SkillAgents lists the agents that read skills this tool installs, sorted.
func SkillAgents() []string {
	var out []string
	for _, n := range AgentNames() {
		if len(profiles[n].SkillDirs) > 0 {
			out = append(out, n)
		}
	}
	return out
}

// agentFacts are the Facts of each agent, kept apart from the launch table.
var agentFacts = map[string]Facts{
	AgentClaude: {StateDir: ".claude",
		AuthEnv:   []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"},
		AuthFiles: []string{".credentials.json"}, AuthFix: "run `claude` once and log in, or set ANTHROPIC_API_KEY",
		TrustFormat: TrustProjectsJSON, TrustFile: "~/.claude.json",
		SessionEnv: []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID"},
		PassEnv: []string{"ANTHROPIC_*", "CLAUDE_CODE_*", "CLAUDE_CONFIG_DIR", "DISABLE_AUTOUPDATER",
			"DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING", "DISABLE_NON_ESSENTIAL_MODEL_CALLS", "DISABLE_PROMPT_CACHING",
			"MAX_THINKING_TOKENS", "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "MCP_TIMEOUT"},
		ProjectDirEnv: "CLAUDE_PROJECT_DIR",
		SkillDirs:     map[string]string{"project": ".claude/skills", "user": "skills"},
		Default:       true, Product: "Claude Code",
		HookFiles: []HookFile{{"project", ".claude/settings.json"}, {"local", ".claude/settings.local.json"}, {"user", "settings.json"}},
		HookEvent: "Stop"},
	AgentCodex: {StateDir: ".codex", StateDirEnv: "CODEX_HOME",
		AuthEnv: []string{"OPENAI_API_KEY", "CODEX_API_KEY"}, AuthConfig: AuthProviderTOML,
		AuthFiles: []string{"auth.json"}, AuthFix: "run `codex login`, or set OPENAI_API_KEY",
		TrustNote:  "codex exec does not ask to trust a folder",
		SessionEnv: []string{"CODEX_THREAD_ID"},
		PassEnv:    []string{"OPENAI_*", "CODEX_*"},
		SkillDirs:  map[string]string{"project": ".agents/skills", "user": "skills"},
		Product:    "Codex",
		// hooks.json next to config.toml, which keeps the hooks' trust.
		HookFiles: []HookFile{{"project", ".codex/hooks.json"}, {"user", "hooks.json"}},
		HookEvent: "Stop", HookTrust: HookTrustTOMLHash},
	AgentGemini: {StateDir: ".gemini",
		AuthEnv:   []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		AuthFiles: []string{"oauth_creds.json"}, AuthFix: "run `gemini` once and choose a sign-in, or set GEMINI_API_KEY",
		TrustFormat: TrustFoldersJSON, TrustFile: "trustedFolders.json",
		PassEnv: []string{"GEMINI_*", "GOOGLE_*"},
		Product: "Gemini CLI",
		// $GEMINI_CLI_HOME stands for HOME; AfterAgent ends its agent turn as Stop does.
		HookFiles: []HookFile{{"project", ".gemini/settings.json"}, {"user", "$GEMINI_CLI_HOME/.gemini/settings.json"}},
		HookEvent: "AfterAgent", HookMillis: true, HookSwitches: HookSwitchesConfig,
		HookProjectNote: "Gemini CLI runs a project's hooks only in a folder it trusts (and warns about new ones once)"},
	// GitHub Copilot CLI 1.0.102 keeps its state under ~/.copilot
	// (COPILOT_HOME); -p runs in a folder it does not trust with no dialog.
	AgentCopilot: {StateDir: ".copilot", StateDirEnv: "COPILOT_HOME",
		AuthEnv:   []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_PROVIDER_API_KEY"},
		AuthFiles: []string{"config.json"}, AuthFix: "run `copilot login`, or set COPILOT_GITHUB_TOKEN (or a provider of your own: COPILOT_PROVIDER_BASE_URL with COPILOT_OFFLINE=true)",
		TrustNote:  "copilot -p does not ask to trust a folder",
		SessionEnv: []string{"COPILOT_AGENT_SESSION_ID", "COPILOT_CLI"},
		PassEnv:    []string{"COPILOT_*", "GH_TOKEN", "GITHUB_TOKEN", "XDG_CACHE_HOME"},
		// Measured: -p offers the skills of .github/skills, .claude/skills
		// and .agents/skills alike; BMAD 6.12 installs its github-copilot
		// skills in .agents/skills.
		SkillDirs: map[string]string{"project": ".agents/skills", "user": "skills"},
		Product:   "GitHub Copilot CLI",
		// Its agentStop hook runs at each turn's end (a child gets it
		// through a plugin of its own, ChildHookPluginDir); a block answer
		// makes its reason the next turn. A project's hook files run only
		// in a folder it trusts; the user's settings.json in any.
		HookFiles: []HookFile{{"project", ".github/hooks/story-automator.json"}, {"user", "settings.json"}},
		HookEvent: "agentStop", HookFlat: true,
		HookProjectNote: "GitHub Copilot CLI runs a project's hooks only in a folder it trusts (answered in its interactive mode, or --trust-folder for one -p session)"},
	// OpenCode 1.18 keeps its sessions, messages and their usage in an
	// SQLite database under its XDG data folder; its config (providers and
	// their keys) under ~/.config/opencode.
	AgentOpenCode: {StateDir: ".local/share/opencode",
		AuthEnv: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}, AuthFiles: []string{"auth.json"},
		AuthFix:   "run `opencode auth login`, or name a provider and its key in ~/.config/opencode/opencode.json",
		TrustNote: "opencode run does not ask to trust a folder",
		PassEnv:   []string{"OPENCODE_*", "ANTHROPIC_*", "OPENAI_*", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"},
		Product:   "OpenCode",
		// Measured on 1.18.33: its skill tool lists a skill's files with rg,
		// downloaded from the network when PATH has none.
		SkillNeeds: []string{"rg"},
		// Measured on 1.18.33: its plugins hear session.idle after a turn
		// ended; no event lets a plugin refuse the stop as a Stop hook does.
		HookRefusal: "its plugins hear a turn's end (session.idle) only after it ended, and an event handler's answer cannot refuse the stop as a Stop hook's does"},
	AgentCustom: {PassEveryAgent: true},
}

// Trust record formats and auth config formats of Facts.
const (
	TrustProjectsJSON = "projects-json"
	TrustFoldersJSON  = "trusted-folders-json"
	AuthProviderTOML  = "model-provider-toml"
)

func init() {
	for n, f := range agentFacts {
		p := profiles[n]
		p.Facts = f
		profiles[n] = p
	}
}

// Ways of ChildHook: Claude Code's --settings with a Stop hook, Codex's -c
// overrides of its hooks table.
// ChildHookPluginDir: a plugin folder of the child's own, named by
// --plugin-dir, whose hooks/hooks.json registers the hook (Copilot CLI's).
const (
	ChildHookSettingsFlag = "settings-flag"
	ChildHookConfigFlag   = "config-flag"
	ChildHookPluginDir    = "plugin-dir"
)

// HookTimeout is the seconds an agent gives this tool's Stop hook before
// killing it, in every settings file and child session that registers it;
// the hook finishes in milliseconds, the margin covers a slow disk or a held lock.
const HookTimeout = 30

// UsageFormat names the format in which an agent CLI records its usage;
// spend has a reader for each.
type UsageFormat string

// Usage formats.
const (
	// UsageAnthropicJSONL: a transcript of Anthropic messages, one per
	// line, whose path the child's Stop hook records (Claude Code's; the
	// simulated agent writes one too).
	UsageAnthropicJSONL UsageFormat = "anthropic-jsonl"
	// UsageRolloutJSONL: a rollout session log under the agent's state
	// directory, sessions/YYYY/MM/DD/rollout-*.jsonl (Codex's).
	UsageRolloutJSONL UsageFormat = "rollout-jsonl"
	// UsageChatSessionJSONL: a chat session record under the agent's state
	// directory, tmp/<project>/chats/session-*.jsonl, its project folders
	// listed in projects.json (Gemini CLI's).
	UsageChatSessionJSONL UsageFormat = "chat-session-jsonl"
	// UsageOpenCodeDB: the SQLite database under the agent's state
	// directory, opencode.db, whose session rows name their folder and
	// whose assistant messages carry their tokens (OpenCode's).
	UsageOpenCodeDB UsageFormat = "opencode-db"
	// UsageEventsJSONL: a session's event log under the agent's state
	// directory, session-state/<id>/events.jsonl, one session.usage_record
	// per model request (Copilot CLI's).
	UsageEventsJSONL UsageFormat = "events-jsonl"
)

// Agent names.
const (
	AgentClaude   = "claude"
	AgentCodex    = "codex"
	AgentGemini   = "gemini"
	AgentCopilot  = "copilot"
	AgentOpenCode = "opencode"
	AgentSim      = "sim"
	AgentCustom   = "custom"
)

// Screen heuristic names: ScreenTurnSummary is a turn-summary line
// ("✻ Worked for 3s") above an empty input prompt (Claude Code's).
const ScreenTurnSummary = "turn-summary"

// The simulated agent's settings (agentsim reads them): what it acts out,
// its faults, its exit code, how long it takes and the usage it reports.
const (
	EnvSimBehaviour = "STORY_AUTOMATOR_SIM_BEHAVIOUR"
	EnvSimFaults    = "STORY_AUTOMATOR_SIM_FAULTS"
	EnvSimExitCode  = "STORY_AUTOMATOR_SIM_EXIT_CODE"
	EnvSimDelay     = "STORY_AUTOMATOR_SIM_DELAY"
	EnvSimUsage     = "STORY_AUTOMATOR_SIM_USAGE"
)

var profiles = map[string]Profile{
	// Claude Code 2.1 runs an Agent call in the background unless
	// background tasks are off, whatever the call's run_in_background says
	// (measured: "Async agent launched successfully"); an unattended child
	// waits for its subagents in the turn (BMAD 6.12's worker needs it),
	// and a backgrounded one never hands control back.
	AgentClaude: {Name: AgentClaude, Program: "claude", Args: []string{"--dangerously-skip-permissions"},
		Env:       map[string]string{"CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "1"},
		ModelFlag: "--model", PromptFlag: "--", Screen: ScreenTurnSummary, ChildHook: ChildHookSettingsFlag,
		SkillForm: "/{skill} {args}", Dialogs: claudeDialogs, MinVersion: "2.1.0", RootEnv: "IS_SANDBOX=1", Usage: UsageAnthropicJSONL,
		Package: "@anthropic-ai/claude-code", Install: "npm install -g @anthropic-ai/claude-code@2.1.328",
		PastePlaceholder: "[Pasted text"}, // "[Pasted text #1 +11 lines]"
	// Codex 0.169 rejects --full-auto (exit 2); an unattended exec bypasses
	// approvals and the sandbox and runs outside a git repository too.
	AgentCodex: {Name: AgentCodex, Program: "codex",
		Args:      []string{"exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"},
		ModelFlag: "--model", PromptFlag: "--", MinVersion: "0.169.0", ChildHook: ChildHookConfigFlag, Usage: UsageRolloutJSONL,
		// Codex names a skill with $ (no slash expansion in exec).
		SkillForm: "${skill} {args}",
		// Its TUI (no subcommand) takes the prompt as its first message;
		// --skip-git-repo-check is exec's alone.
		Interactive: Interactive{Drop: []string{"exec", "--skip-git-repo-check"}},
		Package:     "@openai/codex", Install: "npm install -g @openai/codex@0.169.0",
		PastePlaceholder: "[Pasted Content"}, // "[Pasted Content 1166 chars]"
	AgentGemini: {Name: AgentGemini, Program: "gemini", Args: []string{"--yolo"},
		ModelFlag: "--model", PromptFlag: "-p", ExitDialogs: map[int]Dialog{55: geminiUntrusted}, Dialogs: geminiDialogs, Usage: UsageChatSessionJSONL,
		// Gemini CLI 0.61 turns skills into slash commands only in its
		// interactive UI (SkillCommandLoader); a -p prompt reaches the model
		// as text, which activates a skill with its activate_skill tool.
		// Workspace skills load only in a trusted folder.
		SkillForm: "Use the skill {skill} (activate it with activate_skill) for: {args}",
		// Gemini CLI 0.61's checkPathTrust takes GEMINI_CLI_TRUST_WORKSPACE=true as trusted (what --skip-trust sets).
		TrustEnv: map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"},
		// -i (--prompt-interactive) runs the prompt and stays open.
		Interactive: Interactive{PromptFlag: "-i"},
		MinVersion:  "0.61.0", Package: "@google/gemini-cli", Install: "npm install -g @google/gemini-cli@0.61.0",
		// Gemini CLI 0.61 (InputPrompt) takes an Enter within 40 ms of a paste
		// it cannot trust as a newline, not a submit; the margin covers its
		// React state update on a loaded machine.
		// Its handler can still be the one from before the paste when the
		// screen already shows it, so an Enter may be a newline or ignored
		// even then; the empty box's hint shows a real submit.
		PasteSettle:      250 * time.Millisecond,
		EmptyInputHint:   "Type your message or @path/to/file",
		PastePlaceholder: "[Pasted Text:"}, // "[Pasted Text: 12 lines]"; over 500 characters in ≤ 5 lines "[Pasted Text: N chars]"
	// GitHub Copilot CLI 1.0.102 in prompt mode (-p), which exits when its
	// turn ends: interactive (-i) it first asks to trust the folder and
	// then stays open, adding nothing a run needs. Unconfined it gets
	// every permission (--yolo: tools, paths, URLs); -p needs at least
	// --allow-all-tools to run anything without a terminal.
	AgentCopilot: {Name: AgentCopilot, Program: "copilot", Args: []string{"--yolo", "--no-ask-user", "--no-auto-update"},
		ModelFlag: "--model", PromptFlag: "-p", ChildHook: ChildHookPluginDir, Usage: UsageEventsJSONL, Dialogs: copilotDialogs,
		// Its agentStop hook runs before the event log is flushed: the
		// turn's session.usage_record may land only as the CLI shuts down.
		RecordEnd: `"type":"session.shutdown"`,
		// -p sends "/skill args" to the model as text; the model loads a
		// skill it is offered with its skill tool.
		SkillForm: "Use the skill {skill} (load it with the skill tool) for: {args}",
		// -i (--interactive) runs the prompt and stays open.
		Interactive: Interactive{PromptFlag: "-i"},
		MinVersion:  "1.0.102", Package: "@github/copilot", Install: "npm install -g @github/copilot@1.0.102"},
	// OpenCode 1.18: `run` is its prompt mode (no dialog; it exits when the
	// turn ends); --auto approves every tool call not explicitly denied.
	// It has no sandbox: this tool's wraps it (agent/sandbox.go).
	AgentOpenCode: {Name: AgentOpenCode, Program: "opencode", Args: []string{"run", "--auto"},
		ModelFlag: "--model", PromptFlag: "--", Usage: UsageOpenCodeDB,
		// `run` sends a message that holds a space in double quotes, so a
		// slash command never reaches its command parser; the model loads
		// a skill (from .claude/skills or .agents/skills, both offered by
		// name in its system prompt) with its skill tool.
		SkillForm: "Use the skill {skill} (load it with the skill tool) for: {args}",
		// Its TUI (no `run`) takes --auto too, and the first message by --prompt.
		Interactive: Interactive{Drop: []string{"run"}, PromptFlag: "--prompt"},
		MinVersion:  "1.18.33", Package: "opencode-ai", Install: "npm install -g opencode-ai@1.18.33"},
	// The simulated agent can act out a Claude screen, so it is watched with Claude's heuristic.
	// It writes its usage as a Claude transcript (agentsim.recordTurn).
	// In a story run it acts out BMAD steps unless the environment picks
	// another behaviour.
	AgentSim: {Name: AgentSim, Args: []string{"agent-sim", "--session-agent"}, ModelFlag: "--model", PromptFlag: "--", SkillForm: "/{skill} {args}",
		Screen: ScreenTurnSummary, Usage: UsageAnthropicJSONL, RunEnv: map[string]string{EnvSimBehaviour: "bmad"},
		HostEnv: []string{EnvSimDelay, EnvSimFaults, EnvSimBehaviour, EnvSimExitCode, EnvSimUsage}},
	AgentCustom: {Name: AgentCustom},
}

// Interactive is how a CLI's command line changes for a session a person
// talks to: Drop are the child's arguments (Args, or its sandbox's) left
// out, PromptFlag, when set, replaces PromptFlag. The zero value: the
// child's own command line already stays open after its first turn.
type Interactive struct {
	Drop       []string
	PromptFlag string
}

// SkillPrompt is the prompt that makes agent run skill with args, in the
// agent's own form; ok is false for an agent that cannot be told to.
func SkillPrompt(agent, skill, args string) (prompt string, ok bool) {
	p, found := LookupProfile(agent)
	if !found || p.SkillForm == "" {
		return "", false
	}
	return strings.TrimSpace(strings.NewReplacer("{skill}", skill, "{args}", args).Replace(p.SkillForm)), true
}

// RunsThisBinary reports whether the agent is this tool itself (the
// simulated agent), started as the running binary.
func (p Profile) RunsThisBinary() bool { return p.Name == AgentSim }

// LookupProfile returns the profile of an agent name.
func LookupProfile(agent string) (Profile, bool) {
	p, ok := profiles[agent]
	return p, ok
}

// Paste is how an agent's input box takes a paste.
type Paste struct {
	// Placeholders start what the box may show instead of a long paste.
	Placeholders []string
	// Settle is how long to wait after the paste shows before pressing a key.
	Settle time.Duration
	// EmptyHints are what the box shows while empty (see EmptyInputHint).
	EmptyHints []string
}

// PasteOf is how a paste into an agent's pane shows and settles: the
// agent's own profile, or, when the CLI behind the pane is not known
// (custom, or a session this tool did not spawn), every known placeholder
// and empty-box hint and the longest settle.
func PasteOf(agent string) Paste {
	if p, ok := profiles[agent]; ok && agent != AgentCustom {
		var out Paste
		if p.PastePlaceholder != "" {
			out.Placeholders = []string{p.PastePlaceholder}
		}
		out.Settle = p.PasteSettle
		if p.EmptyInputHint != "" {
			out.EmptyHints = []string{p.EmptyInputHint}
		}
		return out
	}
	var all Paste
	for _, n := range AgentNames() {
		p := profiles[n]
		if p.PastePlaceholder != "" {
			all.Placeholders = append(all.Placeholders, p.PastePlaceholder)
		}
		all.Settle = max(all.Settle, p.PasteSettle)
		if p.EmptyInputHint != "" {
			all.EmptyHints = append(all.EmptyHints, p.EmptyInputHint)
		}
	}
	return all
}

// AgentNames lists the known agents, sorted.
func AgentNames() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RunAgents lists the agents a story run can drive, sorted: all but custom,
// which needs a command per step.
func RunAgents() []string {
	var out []string
	for _, n := range AgentNames() {
		if n != AgentCustom {
			out = append(out, n)
		}
	}
	return out
}

// CLIAgents lists the agents that are a CLI of their own (a program to
// install, check and log in to), sorted.
func CLIAgents() []string {
	var out []string
	for _, n := range AgentNames() {
		if profiles[n].Program != "" {
			out = append(out, n)
		}
	}
	return out
}

// OrList joins names for a sentence: "a, b or c".
func OrList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// --- Hook providers (used by hooks) ---

// HookProviders lists the agents whose settings files take this tool's
// hook (HookFiles), sorted: the providers `hooks install` and `hooks
// status` know.
func HookProviders() []string {
	var out []string
	for _, n := range AgentNames() {
		if len(profiles[n].HookFiles) > 0 {
			out = append(out, n)
		}
	}
	return out
}
