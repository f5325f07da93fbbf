package agent

// Subagents is how a CLI's model launches a subagent whose result its own
// turn waits for — what BMAD 6.12's worker (bmad-build-auto) needs for its
// implementation and review layers; without them it halts `blocked` with
// `no subagents`. Data, read by doctor (doctor/subagents.go): code switches
// on Switch, never on the agent's name.
type Subagents struct {
	// Tools are the tools the CLI offers its model for it, as a child is
	// started (measured against the pinned CLIs in the real skill-path
	// test): the launch, and where the launch does not return the result,
	// the call that waits for it.
	Tools []string
	// How says, for doctor and the docs, how a launch blocks.
	How string
	// Switch names how a user turns them off (SubagentsDenyRule,
	// SubagentsSetting); Key is the setting or the denied tool names.
	Switch string
	Key    []string
	// Files are the settings files that can turn them off, in the order
	// the CLI layers them (a later one wins): Path relative to the project
	// root (Scope "project"), else to the state directory ("~/" = HOME).
	Files []HookFile
	// Format is the files' format (SettingsJSON, SettingsTOML).
	Format string
	// On says what turns them back on, for doctor's fix.
	On string
}

// Ways of Subagents.Switch and formats of Subagents.Format.
const (
	// SubagentsDenyRule: on unless a permissions.deny rule in a settings
	// file names the launch tool bare (Key: the tool's names).
	SubagentsDenyRule = "deny-rule"
	// SubagentsSetting: a boolean at the key path Key, on by default.
	SubagentsSetting = "setting"
	// SubagentsPermission: on unless a settings file's "permission" denies
	// the tool Key names ("deny", or {"*": "deny"}), or its legacy "tools"
	// map sets it false (OpenCode's).
	SubagentsPermission = "permission"
	SettingsJSON        = "json"
	SettingsTOML        = "toml"
)

var subagents = map[string]Subagents{
	// Claude Code 2.1: the Agent tool (Task before 2.1) runs a subagent
	// and returns its final message only with background tasks off, as
	// every child runs (the profile's Env).
	AgentClaude: {Tools: []string{"Agent"}, Switch: SubagentsDenyRule, Key: []string{"Agent", "Task"},
		How:    "the Agent tool returns the subagent's result (a child runs with background tasks off, without which Claude Code 2.1 backgrounds it)",
		Files:  []HookFile{{"user", "settings.json"}, {"project", ".claude/settings.json"}, {"local", ".claude/settings.local.json"}},
		Format: SettingsJSON, On: "remove \"Agent\" (or \"Task\") from permissions.deny in"},
	// Codex 0.169: the multi_agent feature (on by default): spawn_agent
	// starts one, wait_agent blocks until it is done.
	AgentCodex: {Tools: []string{"spawn_agent", "wait_agent"}, Switch: SubagentsSetting, Key: []string{"features", "multi_agent"},
		How:    "spawn_agent starts a subagent and wait_agent blocks until it is done",
		Files:  []HookFile{{"user", "config.toml"}, {"project", ".codex/config.toml"}},
		Format: SettingsTOML, On: "set [features] multi_agent = true (or remove the line) in"},
	// Gemini CLI 0.61: experimental.enableAgents (on by default) offers
	// invoke_agent, whose call returns the subagent's result; its own
	// policy allows it in every approval mode but plan.
	AgentGemini: {Tools: []string{"invoke_agent"}, Switch: SubagentsSetting, Key: []string{"experimental", "enableAgents"},
		How:    "invoke_agent returns the subagent's result",
		Files:  []HookFile{{"user", "settings.json"}, {"project", ".gemini/settings.json"}},
		Format: SettingsJSON, On: "set \"experimental\": {\"enableAgents\": true} (or remove it) in"},
	// GitHub Copilot CLI 1.0.102: task (name, description, prompt,
	// agent_type, mode) with mode "sync" waits for the subagent and
	// returns its answer; "background" returns at once (read_agent then
	// reads it). No settings file turns it off: only --excluded-tools or
	// --deny-tool on its command line, which a child's never has.
	AgentCopilot: {Tools: []string{"task"},
		How: "task with mode \"sync\" returns the subagent's result (\"background\" returns at once)"},
	// OpenCode 1.18: task (description, prompt, subagent_type) runs a
	// subagent session and returns its last message.
	AgentOpenCode: {Tools: []string{"task"}, Switch: SubagentsPermission, Key: []string{"task"},
		How:    "task returns the subagent's result",
		Files:  []HookFile{{"user", "~/.config/opencode/opencode.json"}, {"project", "opencode.json"}, {"project", ".opencode/opencode.json"}},
		Format: SettingsJSON, On: "remove \"task\": \"deny\" from \"permission\" (and \"task\": false from \"tools\") in"},
}

func init() {
	for n, s := range subagents {
		p := profiles[n]
		p.Subagents = s
		profiles[n] = p
	}
}
