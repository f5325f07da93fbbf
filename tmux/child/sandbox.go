package child

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/gitdirs"
	"github.com/story-automator/story-automator/internal/tomledit"
)

// Confine is how one child is confined by its CLI's own sandbox.
type Confine struct {
	// Dir is the folder the child may write: the story's worktree or the project.
	Dir string
	// GitDirs are the git directories the agent must be able to commit to
	// (the repository's .git; for a worktree, its .git/worktrees/<name> and
	// the common objects, refs and logs).
	GitDirs []string
	// Network are the hosts the child's tools may reach (sandbox.network).
	Network []string
	// FilesDir holds the child's sandbox files and its private temp dir.
	FilesDir string
	// SettingsDir holds the child's own settings file where its CLI needs
	// one (Sandbox.SettingsEnv); "" = the user's settings already confine it.
	SettingsDir string
}

// TmpDir is the child's private temporary folder.
func (c *Confine) TmpDir() string { return filepath.Join(c.FilesDir, "tmp") }

// SandboxFilesPath is where a session's sandbox files and temp dir go.
func SandboxFilesPath(stateDir, name string) string {
	return filepath.Join(stateDir, name+".sandbox")
}

// File is a per-child file the spawner writes before the agent starts.
type File struct {
	Path string
	Data []byte
}

// confinedLaunch adds what the sandbox of kind needs to l: arguments,
// per-child files and variables. Claude Code's settings travel with its
// hook in one --settings (claudeSettings).
func confinedLaunch(sb agent.Sandbox, c *Confine, l *Launch) {
	if sb.TmpEnv != "" {
		l.setEnv(sb.TmpEnv, c.TmpDir())
	}
	switch sb.Kind {
	case agent.SandboxCodexWorkspace:
		roots := append(append([]string{}, c.GitDirs...), c.TmpDir())
		l.Argv = append(l.Argv,
			"-c", "sandbox_workspace_write.writable_roots="+tomlList(roots),
			"-c", "sandbox_workspace_write.exclude_slash_tmp=true",
			"-c", "sandbox_workspace_write.network_access=false",
			// A login shell resets PATH (go, python3 and npm go missing).
			"-c", "allow_login_shell=false")
	case agent.SandboxGeminiTools:
		policy := filepath.Join(c.FilesDir, "policy.toml")
		l.Argv = append(l.Argv, "--policy", policy)
		l.Files = append(l.Files, File{policy, []byte(allowPolicy(sb.PolicyTools))})
		if c.SettingsDir != "" {
			settings := filepath.Join(c.SettingsDir, "settings.json")
			l.Files = append(l.Files, File{settings, []byte(toolSandboxSettings)})
			l.setEnv(sb.SettingsEnv, settings)
		}
	}
}

// toolSandboxSettings turns Gemini CLI's tool sandbox on and its YOLO mode off.
const toolSandboxSettings = `{"security":{"toolSandboxing":true,"disableYoloMode":true}}` + "\n"

// allowPolicy lets tools (the shell and the edit tools) run with no
// prompt; the sandbox confines them.
func allowPolicy(tools []string) string {
	var b strings.Builder
	for _, tool := range tools {
		fmt.Fprintf(&b, "[[rule]]\ntoolName = %s\ndecision = \"allow\"\npriority = 100\n\n", tomledit.String(tool))
	}
	return b.String()
}

// claudeSandbox is Claude Code's sandbox settings for a child: no command
// runs outside it, it fails rather than run unconfined, and its network
// proxy lets only the listed hosts through.
func claudeSandbox(hosts []string) map[string]any {
	if hosts == nil {
		hosts = []string{}
	}
	return map[string]any{"enabled": true, "failIfUnavailable": true, "autoAllowBashIfSandboxed": true,
		"allowUnsandboxedCommands": false,
		"network":                  map[string]any{"strictAllowlist": true, "allowedDomains": hosts}}
}

// claudeSettings is the JSON of a Claude Code child's --settings: its hook
// for each of events (when exe is set) and its sandbox (when c is set).
func claudeSettings(exe string, events []string, c *Confine) string {
	s := map[string]any{}
	if exe != "" {
		hook := map[string]any{"type": "command", "command": childHookCommand(exe), "timeout": agent.HookTimeout}
		hooks := map[string]any{}
		for _, e := range events {
			if e != "" {
				hooks[e] = []any{map[string]any{"hooks": []any{hook}}}
			}
		}
		s["hooks"] = hooks
	}
	if c != nil {
		s["sandbox"] = claudeSandbox(c.Network)
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func tomlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = tomledit.String(s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// GitDirs are the git directories of the checkout at dir an agent commits
// to (gitdirs.Writable: never the common directory whole, whose hooks and
// config run code in the run's own git commands).
func GitDirs(dir string) []string { return gitdirs.Writable(dir) }
