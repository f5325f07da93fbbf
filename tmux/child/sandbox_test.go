package child

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/internal/gitdirs"
)

// noGuardRails are the switches that turn a CLI's own checks off; a
// confined child never gets one.
var noGuardRails = []string{"--dangerously-skip-permissions", "--dangerously-bypass-approvals-and-sandbox", "--yolo"}

func confinedBuild(t *testing.T, name string) Launch {
	t.Helper()
	p, _ := agent.LookupProfile(name)
	c := &Confine{Dir: "/p/wt", GitDirs: []string{"/p/.git", "/p/.git/worktrees/wt"}, Network: []string{"registry.npmjs.org"},
		FilesDir: "/s/x.sandbox", SettingsDir: "/run/x", ReadDeny: []string{"/h/.ssh", "/h/.netrc"},
		CLIWrites: []string{"/h", "/p"}}
	l, err := Build(p, Invocation{Exe: "/bin/sa", Model: "m", Prompt: "go", Confine: c})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range l.Argv {
		if slices.Contains(noGuardRails, a) {
			t.Fatalf("%s confined argv %q has %s", name, l.Argv, a)
		}
	}
	return l
}

func TestAConfinedClaudeChildGetsItsSandboxInTheSettingsItsHookUses(t *testing.T) {
	l := confinedBuild(t, agent.AgentClaude)
	i := slices.Index(l.Argv, "--settings")
	if i < 0 || !slices.Contains(l.Argv, "dontAsk") || slices.Contains(l.Argv[i+1:], "--settings") {
		t.Fatalf("argv %q: want one --settings and dontAsk", l.Argv)
	}
	var s struct {
		Hooks       map[string]any
		Permissions struct{ Deny []string }
		Sandbox     struct {
			Enabled, FailIfUnavailable, AllowUnsandboxedCommands bool
			Network                                              struct {
				StrictAllowlist bool
				AllowedDomains  []string
			}
			Filesystem struct{ DenyRead []string }
		}
	}
	if err := json.Unmarshal([]byte(l.Argv[i+1]), &s); err != nil {
		t.Fatal(err)
	}
	sb := s.Sandbox
	if s.Hooks["Stop"] == nil || !sb.Enabled || !sb.FailIfUnavailable || sb.AllowUnsandboxedCommands ||
		!sb.Network.StrictAllowlist || !reflect.DeepEqual(sb.Network.AllowedDomains, []string{"registry.npmjs.org"}) {
		t.Fatalf("settings %s", l.Argv[i+1])
	}
	// The credentials: its file tools by deny rules, its shell by its
	// sandbox's read denial.
	if !slices.Equal(s.Permissions.Deny, []string{"Read(//h/.ssh)", "Read(//h/.ssh/**)", "Read(//h/.netrc)", "Read(//h/.netrc/**)"}) ||
		!slices.Equal(sb.Filesystem.DenyRead, []string{"/h/.ssh", "/h/.netrc"}) {
		t.Fatalf("read denial: permissions %q, sandbox.filesystem.denyRead %q", s.Permissions.Deny, sb.Filesystem.DenyRead)
	}
	if l.Wrap != nil {
		t.Errorf("Claude Code hides the credentials itself, yet its argv is wrapped: %+v", l.Wrap)
	}
	// Its own temp folder: the files it mounts into its sandbox are not
	// shared with (and deleted by) another session's Claude Code.
	if l.Env["CLAUDE_CODE_TMPDIR"] != "/s/x.sandbox/tmp" {
		t.Errorf("env %v", l.Env)
	}
}

func TestAConfinedCodexChildWritesItsGitDirsAndPrivateTempOnly(t *testing.T) {
	l := confinedBuild(t, agent.AgentCodex)
	argv := strings.Join(l.Argv, " ")
	// Its permission profile, not --sandbox (with which Codex would take its
	// older sandbox settings, which cannot deny a read).
	for _, want := range []string{"codex exec --skip-git-repo-check ", `-c default_permissions="story-automator"`,
		`-c permissions.story-automator={extends=":workspace",filesystem={"/p/.git"="write","/p/.git/worktrees/wt"="write",` +
			`"/s/x.sandbox/tmp"="write",":slash_tmp"="read","/h/.ssh"="deny","/h/.netrc"="deny"},network={enabled=false}}`,
		"-c allow_login_shell=false", "hooks.Stop="} {
		if !strings.Contains(argv, want) {
			t.Errorf("argv lacks %q: %s", want, argv)
		}
	}
	if slices.Contains(l.Argv, "--sandbox") || l.Wrap != nil {
		t.Errorf("argv %q wrap %+v", l.Argv, l.Wrap)
	}
	if l.Env["TMPDIR"] != "/s/x.sandbox/tmp" {
		t.Errorf("env %v", l.Env)
	}
}

func TestAConfinedGeminiChildReadsItsOwnSettingsAndPolicy(t *testing.T) {
	l := confinedBuild(t, agent.AgentGemini)
	p, _ := agent.LookupProfile(agent.AgentGemini)
	if !slices.Contains(l.Argv, "auto_edit") || !slices.Contains(l.Argv, "/s/x.sandbox/policy.toml") {
		t.Fatalf("argv %q", l.Argv)
	}
	if l.Env[p.Sandbox.SettingsEnv] != "/run/x/settings.json" || len(l.Files) != 2 {
		t.Fatalf("env %v files %d", l.Env, len(l.Files))
	}
	if !strings.Contains(string(l.Files[1].Data), `"toolSandboxing":true`) ||
		strings.Count(string(l.Files[0].Data), `decision = "allow"`) != len(p.Sandbox.PolicyTools) {
		t.Fatalf("files %s / %s", l.Files[0].Data, l.Files[1].Data)
	}
	// A headless Gemini CLI denies activate_skill unless a policy allows
	// it: without it a child cannot load BMAD's worker skill.
	if !strings.Contains(string(l.Files[0].Data), `toolName = "activate_skill"`) {
		t.Fatalf("the policy does not allow activate_skill:\n%s", l.Files[0].Data)
	}
	// Its sandbox cannot hide a path: this tool's bubblewrap wraps it,
	// hiding the credentials, with the network its model API needs (not on
	// macOS, which refuses a sandbox inside another).
	if !p.Sandbox.HidesCredentials(runtime.GOOS) {
		if l.Wrap != nil {
			t.Fatalf("wrapped on %s: %+v", runtime.GOOS, l.Wrap)
		}
		return
	}
	if l.Wrap == nil || !reflect.DeepEqual(*l.Wrap, confine.Policy{Writable: []string{"/h", "/p"},
		ReadDeny: []string{"/h/.ssh", "/h/.netrc"}, Network: true, TmpDir: "/tmp", Nests: true}) {
		t.Fatalf("wrap %+v", l.Wrap)
	}
}

// Copilot CLI's own sandbox cannot hold the policy, so this tool's
// bubblewrap wraps the whole CLI: it writes its folder, its git dirs (never
// their hooks or config), its private /tmp and what cliWrites lists; the
// credentials are hidden; its path checks are off inside the wrap; its
// network is its model endpoint's and the workflow's hosts', through the
// wrap's proxy.
func TestAConfinedCopilotChildIsWrappedWhole(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o700); err != nil {
		t.Fatal(err)
	}
	p, _ := agent.LookupProfile(agent.AgentCopilot)
	c := &Confine{Dir: dir, GitDirs: GitDirs(dir), Guarded: gitdirs.Guarded(dir), FilesDir: "/s/x.sandbox", ReadDeny: []string{"/h/.ssh"},
		CLIWrites: []string{dir, "/h/.copilot"}, Model: []string{"127.0.0.1:4000"}, Network: []string{"*.pypi.org"},
		Exe: "/bin/sa", NetLog: "/s/x.network.log"}
	l, err := Build(p, Invocation{Exe: "/bin/sa", Prompt: "go", Confine: c, FilesDir: "/s/x.sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(l.Argv, "--yolo") || !slices.Contains(l.Argv, "--allow-all-paths") || !slices.Contains(l.Argv, "--plugin-dir") {
		t.Fatalf("argv %q", l.Argv)
	}
	want := confine.Policy{Writable: []string{dir, "/h/.copilot"}, ReadDeny: []string{"/h/.ssh"}, TmpDir: "/s/x.sandbox/tmp",
		Net: &confine.Net{Exe: "/bin/sa", Allow: []string{"127.0.0.1:4000", "*.pypi.org"}, Log: "/s/x.network.log"},
		ReadOnly: []string{filepath.Join(dir, ".git", "config"), filepath.Join(dir, ".git", "config.worktree"),
			filepath.Join(dir, ".git", "hooks"), filepath.Join(dir, ".git", "worktrees")}}
	if l.Wrap == nil || !reflect.DeepEqual(*l.Wrap, want) {
		t.Fatalf("wrap %+v, want %+v", l.Wrap, want)
	}
}

// --sandbox off keeps today's unattended start; sim has no sandbox.
func TestAnUnconfinedChildKeepsTheUnattendedArgs(t *testing.T) {
	for _, name := range agent.CLIAgents() {
		p, _ := agent.LookupProfile(name)
		l, err := Build(p, Invocation{Prompt: "x", FilesDir: "/s"})
		if err != nil || !slices.Equal(l.Argv[1:len(p.Args)+1], p.Args) || len(l.Files) != 0 || l.Env != nil {
			t.Errorf("%s: %q %v", name, l.Argv, err)
		}
	}
	p, _ := agent.LookupProfile(agent.AgentSim)
	l, _ := Build(p, Invocation{Exe: "/bin/sa", Prompt: "x", Confine: &Confine{FilesDir: "/s"}})
	if !slices.Equal(l.Argv[1:3], p.Args) || l.Env != nil {
		t.Errorf("sim: %q", l.Argv)
	}
}

// Gemini CLI reads a settings file named by the environment only when root
// alone can write it and every folder above it: a folder under /tmp is not
// one, a user's own setting makes the file needless.
func TestTheSettingsFileGoesWhereTheCLIReadsIt(t *testing.T) {
	p, _ := agent.LookupProfile(agent.AgentGemini)
	tmp := t.TempDir()
	if rootOnly(tmp) {
		t.Fatalf("%s counts as root's alone", tmp)
	}
	home := t.TempDir()
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"toolSandboxing":true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if dir, err := settingsPlace(p, tmp, "sa-x", getenv); dir != "" || err != nil {
		t.Fatalf("with the user's own setting: %q %v, want none needed", dir, err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	dir, err := settingsPlace(p, tmp, "sa-x", getenv)
	switch {
	case os.Geteuid() != 0:
		if ae, ok := AsAgentError(err); !ok || ae.Code != CodeSandboxUnavailable {
			t.Fatalf("not root: %q %v, want sandbox_unavailable", dir, err)
		}
	case err == nil:
		defer os.RemoveAll(dir)
		if dir == tmp || !rootOnly(dir) {
			t.Fatalf("root: %q, want a folder root alone writes", dir)
		}
	}
}
