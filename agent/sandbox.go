package agent

import (
	"slices"
	"sort"
)

// Sandbox is how an agent CLI confines its own tools so that a child can
// run with no prompt yet write only its story's folder, its .git and a
// private temporary folder, and reach no network but the hosts the user
// lists. It is data: tmux/child switches on Kind, never on the agent.
type Sandbox struct {
	// Kind names how the confinement is set up for one child
	// (SandboxClaudeSettings, SandboxCodexProfile, SandboxGeminiTools, or
	// SandboxWrapped: this tool's sandbox around the whole CLI); "" = the
	// child is not confined.
	Kind string
	// Args replace Profile.Args for a confined child: the same unattended
	// start with the CLI's sandbox on instead of its "no guard rails"
	// switch (--dangerously-skip-permissions, --yolo…), which stays in
	// Args for a child started with the sandbox off.
	Args []string
	// OS lists the systems (GOOS) where the CLI's sandbox works; on others
	// a confined child is refused.
	OS []string
	// Needs are the programs the sandbox runs on Linux (bubblewrap,
	// socat); Install is how to get them.
	Needs   []string
	Install string
	// Hosts: the sandbox can let single hosts through (sandbox.network);
	// without it those hosts stay blocked too.
	Hosts bool
	// Allows says, for doctor and the docs, what a confined child may do.
	Allows string
	// Hides says how a confined child is kept from reading the user's
	// credentials (HideOwn, HideWrap); "" = it is not (an agent with no
	// sandbox). HidesOn are the systems (GOOS) where that works, when not
	// every one in OS: one sandbox inside another is refused by macOS's.
	Hides   string
	HidesOn []string
	// Unconfined says why an agent without a sandbox is not confined;
	// OwnCode marks one that runs only this tool's own code (the simulated
	// agent), whose being unconfined needs no warning.
	Unconfined string
	OwnCode    bool
	// SettingsEnv names the variable with which a child reads a settings
	// file of its own that outranks the user's ("" = none needed). The CLI
	// reads that file only when it and every folder above it are owned by
	// root and writable by no one else (SettingsRootOnly); UserSetting is
	// the key path in the user's own settings file (relative to the state
	// directory: UserSettingsFile) that confines it without one.
	SettingsEnv      string
	SettingsRootOnly bool
	UserSettingsFile string
	UserSetting      []string
	// PolicyTools are the tools a per-child policy lets run with no prompt.
	PolicyTools []string
	// InsideEnv are variables the CLI sets for commands its sandbox runs
	// (any one set: the session running this tool is confined); nil = it
	// sets none we know of. TurnOn says how a user confines a session of
	// theirs (one this tool does not start).
	InsideEnv []string
	TurnOn    string
	// TmpEnv names the variable that points the CLI at the child's private
	// temporary folder ("" = its sandbox already gives the tools a private
	// /tmp). Claude Code keeps the files it mounts into its sandbox (its
	// settings, named by their content) in a temp folder shared by every
	// session of the user unless told otherwise, and deletes them when it
	// exits: two children with the same settings broke each other's
	// shell calls ("bwrap: Can't find source path").
	TmpEnv string
	// Model is where a CLI wrapped whole (SandboxWrapped) calls its model
	// API from inside the wrap: the wrap's proxy lets that endpoint
	// through besides sandbox.network; nil = it calls none from inside.
	Model *ModelEndpoint
	// WrapWrites are the folders (relative to HOME) a CLI wrapped whole
	// writes itself besides its state directory: its data, state and
	// config; created when absent.
	WrapWrites []string
	// WrapPrivate are folders (relative to HOME) a CLI wrapped whole
	// writes itself and its later sessions load code or settings from
	// (its config folder: plugins, its package install): on Linux the
	// child gets a private copy of each, mounted over it and gone with
	// the child, so nothing it writes there reaches a later session, nor
	// the user's own unconfined one (elsewhere the folder is writable, as
	// WrapWrites). PrivateSkip are names in them not copied (a package
	// folder the CLI installs again at each start); created when absent.
	WrapPrivate []string
	PrivateSkip []string
	// CacheDir is the CLI's folder under the user's cache folder
	// ($XDG_CACHE_HOME, else ~/.cache) that it writes when it starts
	// (its unpacked program, its packages), which a child wrapped whole
	// must keep writing; created when absent; "" = none.
	CacheDir string
	// Plants are the names (relative to the child's folder) the sandbox
	// creates or mounts over when they are absent; a run keeps them out of
	// git (orchestrator/gitvcs/planted.go).
	Plants []string
}

// ModelEndpoint is where a CLI reaches its model API: the base URL a
// variable or its config file names, else its default hosts.
type ModelEndpoint struct {
	// Hosts are the hosts (netproxy rules: host, *.domain) it reaches
	// when no base URL is set.
	Hosts []string
	// URLEnv are variables whose value, when set, is the base URL it
	// uses instead.
	URLEnv []string
	// URLFile is a JSON config file under the user's config folder
	// ($XDG_CONFIG_HOME, else ~/.config) in which every string under a
	// URLKey key is a base URL it uses instead ("" = none).
	URLFile, URLKey string
}

// Ways of Sandbox.Kind.
const (
	// SandboxClaudeSettings: Claude Code's "sandbox" settings, merged into
	// the child's --settings, with a permission mode that keeps its file
	// tools in the project.
	SandboxClaudeSettings = "claude-settings"
	// SandboxCodexProfile: Codex's sandbox, a permission profile set by -c
	// overrides (extends its :workspace; the git dirs and the private temp
	// dir writable, /tmp read-only, the credentials denied, no network, no
	// login shell).
	SandboxCodexProfile = "codex-permission-profile"
	// SandboxGeminiTools: Gemini CLI's tool sandboxing from a per-child
	// settings file, with auto_edit approval and a per-child policy.
	SandboxGeminiTools = "gemini-tool-sandboxing"
	// SandboxWrapped: this tool's sandbox (internal/confine: bubblewrap on
	// Linux, sandbox-exec on macOS) around the whole CLI process, for an
	// agent with no sandbox of its own (a custom command, OpenCode) or one
	// whose own cannot hold the policy (Copilot CLI). It writes the
	// child's folder, its git dirs (never their hooks or config), a private
	// /tmp, and the CLI's own state directory, WrapWrites and CacheDir (and
	// the sessions' state folder when a hook of ours runs inside it); it
	// reads everything but the credentials; its network is the workflow's
	// sandbox.network hosts and the CLI's model endpoint (Model) only,
	// through a proxy outside the wrap (internal/confine, Policy.Net).
	SandboxWrapped = "wrapped"
)

// Ways of Sandbox.Hides.
const (
	// HideOwn: the CLI's own means, set up with its sandbox (Kind): Claude
	// Code's Read deny rules and its sandbox's denyRead, Codex's permission
	// profile with the paths set to "deny".
	HideOwn = "own"
	// HideWrap: this tool's bubblewrap around the whole CLI process
	// (internal/confine), for a CLI whose sandbox cannot hide a path from
	// its shell (the CLI's own sandbox runs nested inside it), or for an
	// agent that has only that one (SandboxWrapped).
	HideWrap = "wrap"
)

// SandboxInstall is how a Debian or Ubuntu machine gets what the Linux
// sandboxes run.
const SandboxInstall = "apt-get install bubblewrap socat"

// confineInstall is how a Debian or Ubuntu machine gets what this tool's
// own sandbox around a whole CLI (SandboxWrapped) runs.
const confineInstall = "apt-get install bubblewrap"

// writesAllowed is what every CLI sandbox lets a child write.
const writesAllowed = "writes: the story's worktree (or the project), its .git, a private temp dir"

var sandboxes = map[string]Sandbox{
	// Claude Code 2.1: dontAsk denies whatever is not allowed below without
	// a prompt; Edit(./**) keeps the file tools in the child's folder
	// (bypassPermissions would let them write anywhere).
	AgentClaude: {Kind: SandboxClaudeSettings, OS: []string{"linux", "darwin"},
		Args:  []string{"--permission-mode", "dontAsk", "--allowedTools", "Bash", "Edit(./**)", "Write(./**)"},
		Needs: []string{"bwrap", "socat"}, Install: SandboxInstall, Hosts: true,
		InsideEnv: []string{"SANDBOX_RUNTIME"}, TmpEnv: "CLAUDE_CODE_TMPDIR", Hides: HideOwn,
		TurnOn: "run /sandbox in the session, or set \"sandbox\": {\"enabled\": true} in its settings",
		// Its protected names, over which it mounts /dev/null when absent.
		Plants: []string{".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
			".bash_aliases", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".envrc",
			".ripgreprc", ".mcp.json", ".claude.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".idea", ".vscode",
			".claude/commands", ".claude/agents", ".claude/settings.json", ".claude/settings.local.json",
			// and, measured in a project that has a .claude folder (BMAD 6.12
			// installs its skills there), these too
			".claude/hooks", ".claude/launch.json", ".claude/loop.md", ".claude/output-styles", ".claude/routines",
			".claude/scheduled_tasks.json", ".claude/workflows"},
		Allows: writesAllowed + "; network: the sandbox.network hosts only"},
	// Codex 0.169: exec runs with approval "never" already. No --sandbox:
	// with it Codex takes its older sandbox settings, which cannot deny a
	// read, instead of the permission profile (default_permissions).
	AgentCodex: {Kind: SandboxCodexProfile, OS: []string{"linux", "darwin"}, Hides: HideOwn,
		Args: []string{"exec", "--skip-git-repo-check"},
		// Linux: CODEX_SANDBOX_NETWORK_DISABLED (measured); macOS Seatbelt: CODEX_SANDBOX.
		InsideEnv: []string{"CODEX_SANDBOX_NETWORK_DISABLED", "CODEX_SANDBOX"}, TmpEnv: "TMPDIR",
		TurnOn:  "start it with --sandbox workspace-write (or sandbox_mode = \"workspace-write\" in config.toml)",
		Install: SandboxInstall,
		Allows:  writesAllowed + "; network: none (Codex cannot let single hosts through)"},
	// Gemini CLI 0.61: never --yolo when confined, which gives its shell
	// the host's network.
	// Its sandbox hides only the project's .geminiignore'd files, so this
	// tool's bubblewrap wraps it to hide the credentials.
	AgentGemini: {Kind: SandboxGeminiTools, OS: []string{"linux", "darwin"}, Hides: HideWrap, HidesOn: []string{"linux"},
		Args:  []string{"--approval-mode", "auto_edit"},
		Needs: []string{"bwrap"}, Install: SandboxInstall,
		// The system settings path outranks the user's settings, which stay untouched.
		SettingsEnv: "GEMINI_CLI_SYSTEM_SETTINGS_PATH", SettingsRootOnly: true,
		UserSettingsFile: "settings.json", UserSetting: []string{"security", "toolSandboxing"},
		PolicyTools: []string{"run_shell_command", "replace", "write_file", "activate_skill"},
		Plants:      []string{".gitignore", ".geminiignore"},
		TurnOn:      "set \"security\": {\"toolSandboxing\": true} in ~/.gemini/settings.json and do not start it with --yolo",
		Allows:      writesAllowed + "; /tmp is private; network: none (Gemini CLI cannot let single hosts through)"},
	// OpenCode 1.18 has no sandbox (no option or command of its help names
	// one): this tool's wraps it. It calls its model API itself, through
	// the wrap's proxy (Bun honours HTTPS_PROXY), and it writes its
	// database, state and cache, and its config folder (it installs its
	// plugin package there at each start, and stops with "Unexpected
	// error" when it cannot): a private copy of that one, without the
	// installed packages, as a plugin planted there would run in the
	// user's next OpenCode.
	AgentOpenCode: {Kind: SandboxWrapped, OS: []string{"linux", "darwin"}, Hides: HideWrap,
		Needs: []string{"bwrap"}, Install: confineInstall, Hosts: true,
		// A provider's options.baseURL in its opencode.json, else the
		// providers' own APIs and its models list.
		Model: &ModelEndpoint{Hosts: []string{"api.anthropic.com", "api.openai.com", "models.dev", "opencode.ai", "*.opencode.ai"},
			URLFile: "opencode/opencode.json", URLKey: "baseURL"},
		WrapWrites: []string{".local/share/opencode", ".local/state/opencode"}, CacheDir: "opencode",
		WrapPrivate: []string{".config/opencode"}, PrivateSkip: []string{"node_modules"},
		Allows: writesAllowed + ", its own data, state and cache folders and a private copy of its config folder; /tmp is private; network: its model endpoint and the sandbox.network hosts only, through this tool's proxy"},
	// Copilot CLI 1.0.102's --sandbox cannot hold the policy: its file
	// edits are not in it, it lets a shell command write the project's
	// .git/hooks and the host's /tmp, it cannot narrow .git, and on Linux
	// it needs slirp4netns and iptables, without which every shell call is
	// refused and the CLI still exits 0. So this tool's bubblewrap wraps
	// the whole CLI, its tools with it; inside, its own path checks are
	// off (--allow-all-paths) so a write outside fails in the sandbox.
	AgentCopilot: {Kind: SandboxWrapped, OS: []string{"linux"}, Hides: HideWrap,
		Args:  []string{"--allow-all-tools", "--allow-all-paths", "--no-ask-user", "--no-auto-update"},
		Needs: []string{"bwrap"}, Install: confineInstall, CacheDir: "copilot", Hosts: true,
		// A provider of its own (COPILOT_PROVIDER_BASE_URL), else GitHub's
		// Copilot API and sign-in.
		Model: &ModelEndpoint{Hosts: []string{"github.com", "api.github.com", "*.githubcopilot.com"},
			URLEnv: []string{"COPILOT_PROVIDER_BASE_URL"}},
		Allows: writesAllowed + ", the CLI's own ~/.copilot and cache; /tmp is private; network: its model endpoint and the sandbox.network hosts only, through this tool's proxy"},
	AgentSim: {Unconfined: "the simulated agent runs only this tool's own code", OwnCode: true},
	// A custom command has no sandbox of its own: this tool's wraps it.
	AgentCustom: {Kind: SandboxWrapped, OS: []string{"linux", "darwin"}, Hides: HideWrap,
		Needs: []string{"bwrap"}, Install: confineInstall, Hosts: true,
		Allows: writesAllowed + "; /tmp is private; network: the sandbox.network hosts only, through this tool's proxy"},
}

func init() {
	for n, s := range sandboxes {
		p := profiles[n]
		p.Sandbox = s
		profiles[n] = p
	}
}

// SandboxPlants are the names every agent's sandbox may plant, sorted, once each.
func SandboxPlants() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range AgentNames() {
		for _, name := range profiles[n].Sandbox.Plants {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// SessionSandbox tells, from the environment of a command an agent
// session runs, which agent's session it is and whether the session is
// confined by that CLI's sandbox; known is false when the session's CLI
// sets no variable that tells (or no agent session is found).
func SessionSandbox(getenv func(string) string) (name string, confined, known bool) {
	for _, n := range AgentNames() {
		p := profiles[n]
		inSession := false
		for _, v := range p.SessionEnv {
			inSession = inSession || getenv(v) != ""
		}
		if !inSession {
			continue
		}
		for _, v := range p.Sandbox.InsideEnv {
			if getenv(v) != "" {
				return n, true, true
			}
		}
		return n, false, len(p.Sandbox.InsideEnv) > 0
	}
	return "", false, false
}

// SupportsOS reports whether the sandbox works on goos.
func (s Sandbox) SupportsOS(goos string) bool {
	for _, o := range s.OS {
		if o == goos {
			return true
		}
	}
	return false
}

// HidesCredentials reports whether a confined child is kept from the
// user's credentials on goos.
func (s Sandbox) HidesCredentials(goos string) bool {
	if s.Hides == "" || !s.SupportsOS(goos) {
		return false
	}
	return len(s.HidesOn) == 0 || slices.Contains(s.HidesOn, goos)
}

// Reads says, for doctor and the docs, what a confined child may read on
// goos and by which layer it is kept from the rest.
func (s Sandbox) Reads(goos string) string {
	switch {
	case s.HidesCredentials(goos) && s.Hides == HideWrap:
		return "reads: everything but your credentials (~/.ssh, ~/.aws, ~/.config/gh, the keyrings…), hidden by this tool's bubblewrap around the CLI"
	case s.HidesCredentials(goos):
		return "reads: everything but your credentials (~/.ssh, ~/.aws, ~/.config/gh, the keyrings…), denied by the CLI's own sandbox"
	}
	return "reads: everything you can (your credentials are not hidden from it on " + goos + ")"
}

// ArgsFor is the argv that follows the program: the confined start, or
// the unconfined one when confined is false, the agent has no sandbox or
// its start is the same either way (this tool's sandbox around it).
func (p Profile) ArgsFor(confined bool) []string {
	if confined && p.Sandbox.Kind != "" && p.Sandbox.Args != nil {
		return p.Sandbox.Args
	}
	return p.Args
}
