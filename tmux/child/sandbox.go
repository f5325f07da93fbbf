package child

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/confine"
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
	// Model are the destinations of the CLI's model endpoint, which a CLI
	// wrapped whole calls from inside the wrap (agent.ModelEndpoint).
	Model []string
	// Exe is this program, which runs a wrapped child's network proxy,
	// and NetLog the file the proxy logs to.
	Exe, NetLog string
	// FilesDir holds the child's sandbox files and its private temp dir.
	FilesDir string
	// SettingsDir holds the child's own settings file where its CLI needs
	// one (Sandbox.SettingsEnv); "" = the user's settings already confine it.
	SettingsDir string
	// ReadDeny are the paths the child may not read (ReadDenied): absolute.
	ReadDeny []string
	// CLIWrites are the folders the CLI itself writes when this tool's
	// bubblewrap wraps it (agent.HideWrap; cliWrites): under
	// agent.SandboxWrapped, everything the child may write but its /tmp.
	CLIWrites []string
	// Private are the private copies mounted over the folders its CLI
	// writes and later sessions load from (agent Sandbox.WrapPrivate).
	Private []confine.Mount
	// Guarded are the paths inside GitDirs kept read-only when this
	// tool's sandbox is the whole sandbox (agent.SandboxWrapped): the hooks
	// and config that make git run code (gitdirs.Guarded).
	Guarded []string
}

// TmpDir is the child's private temporary folder.
func (c *Confine) TmpDir() string { return filepath.Join(c.FilesDir, "tmp") }

// SandboxFilesPath is where a session's sandbox files and temp dir go.
func SandboxFilesPath(stateDir, name string) string {
	return filepath.Join(stateDir, name+".sandbox")
}

// NetworkLogPath is where a wrapped child's network proxy logs each
// request it let through or refused.
func NetworkLogPath(stateDir, name string) string {
	return filepath.Join(stateDir, name+".network.log")
}

// modelAllow are the destinations of a CLI's model endpoint m: the host
// and port of each base URL its variables or its config file name, else
// its default hosts; nil when it calls none from inside its sandbox.
func modelAllow(m *agent.ModelEndpoint, getenv func(string) string) ([]string, error) {
	if m == nil {
		return nil, nil
	}
	var urls []string
	for _, v := range m.URLEnv {
		if u := getenv(v); u != "" {
			urls = append(urls, u)
		}
	}
	if m.URLFile != "" {
		dir := getenv("XDG_CONFIG_HOME")
		if dir == "" && getenv("HOME") != "" {
			dir = filepath.Join(getenv("HOME"), ".config")
		}
		if dir != "" {
			found, err := configURLs(filepath.Join(dir, m.URLFile), m.URLKey)
			if err != nil {
				return nil, err
			}
			urls = append(urls, found...)
		}
	}
	if len(urls) == 0 {
		return slices.Clone(m.Hosts), nil
	}
	var out []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, coded.Fail(confine.CodeSandboxUnavailable, "the model's base URL %q is not an http(s) URL, so this tool's sandbox cannot let it through", raw).
				WithAction("give the CLI an http:// or https:// base URL")
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		if d := net.JoinHostPort(u.Hostname(), port); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// configURLs are the strings under key anywhere in the JSON file at path
// (none when it does not exist).
func configURLs(path, key string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, coded.Fail(confine.CodeSandboxUnavailable, "cannot read the model's base URL from %s (%v), which this tool's sandbox lets through", path, err).
			WithAction("make %s plain JSON (no comments), or list the model's host in sandbox.network in workflow.yaml", path)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				if s, ok := e.(string); ok && k == key {
					out = append(out, s)
				} else {
					walk(e)
				}
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(doc)
	slices.Sort(out)
	return out, nil
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
	case agent.SandboxCodexProfile:
		l.Argv = append(l.Argv,
			"-c", "default_permissions="+tomledit.String(codexProfile),
			"-c", "permissions."+codexProfile+"="+codexPermissions(c),
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
	switch {
	case sb.Kind == agent.SandboxWrapped:
		// This tool's sandbox is the whole sandbox: the CLI and its tools
		// write only what cliWrites lists, never git's hooks or config;
		// they reach the workflow's hosts and the CLI's model endpoint
		// only, through the wrap's proxy.
		l.Wrap = &confine.Policy{Writable: c.CLIWrites, Over: c.Private, ReadOnly: c.Guarded, ReadDeny: c.ReadDeny, TmpDir: c.TmpDir()}
		if allow := append(slices.Clone(c.Model), c.Network...); len(allow) > 0 {
			l.Wrap.Net = &confine.Net{Exe: c.Exe, Allow: allow, Log: c.NetLog}
		}
	case sb.Hides == agent.HideWrap && sb.HidesCredentials(runtime.GOOS):
		// The CLI's own network is its model API; its tools' network is
		// its own sandbox's to refuse.
		l.Wrap = &confine.Policy{Writable: c.CLIWrites, ReadDeny: c.ReadDeny, Network: true, TmpDir: "/tmp", Nests: true}
	}
}

// codexProfile names the permission profile a Codex child runs under.
const codexProfile = "story-automator"

// codexPermissions is a Codex child's permission profile, an inline TOML
// table: Codex's :workspace (the child's folder writable, everything
// readable) with its git dirs and private temp dir writable, /tmp
// read-only, the denied paths unreadable, and no network.
func codexPermissions(c *Confine) string {
	var fs []string
	add := func(path, access string) {
		fs = append(fs, tomledit.String(path)+"="+tomledit.String(access))
	}
	for _, d := range c.GitDirs {
		add(d, "write")
	}
	add(c.TmpDir(), "write")
	add(":slash_tmp", "read")
	for _, d := range c.ReadDeny {
		add(d, "deny")
	}
	return `{extends=":workspace",filesystem={` + strings.Join(fs, ",") + `},network={enabled=false}}`
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
// runs outside it, it fails rather than run unconfined, its network proxy
// lets only the listed hosts through, and its commands cannot read the
// denied paths.
func claudeSandbox(hosts, denyRead []string) map[string]any {
	if hosts == nil {
		hosts = []string{}
	}
	sb := map[string]any{"enabled": true, "failIfUnavailable": true, "autoAllowBashIfSandboxed": true,
		"allowUnsandboxedCommands": false,
		"network":                  map[string]any{"strictAllowlist": true, "allowedDomains": hosts}}
	if len(denyRead) > 0 {
		sb["filesystem"] = map[string]any{"denyRead": denyRead}
	}
	return sb
}

// claudeReadDeny are Claude Code's permission rules that keep its file
// tools (Read, and with it Grep and Glob) from the denied paths: each
// path itself and everything under it ("//" starts an absolute path).
func claudeReadDeny(paths []string) []string {
	var rules []string
	for _, p := range paths {
		abs := "/" + filepath.ToSlash(p)
		rules = append(rules, "Read("+abs+")", "Read("+strings.TrimSuffix(abs, "/")+"/**)")
	}
	return rules
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
		s["sandbox"] = claudeSandbox(c.Network, c.ReadDeny)
		if len(c.ReadDeny) > 0 {
			s["permissions"] = map[string]any{"deny": claudeReadDeny(c.ReadDeny)}
		}
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// GitDirs are the git directories of the checkout at dir an agent commits
// to (gitdirs.Writable: never the common directory whole, whose hooks and
// config run code in the run's own git commands).
func GitDirs(dir string) []string { return gitdirs.Writable(dir) }
