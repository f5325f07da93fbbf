package child

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/confine"
	"github.com/story-automator/story-automator/tmux"
)

// A confined child of a CLI whose sandbox cannot hide a path starts inside
// this tool's sandbox, which hides the user's credentials under the
// child's HOME and the workflow's readDeny, never the agent's own state;
// the CLI writes HOME and the project itself, and keeps its network.
func TestSpawnWrapsACLIWhoseSandboxCannotHideCredentials(t *testing.T) {
	var name string
	for _, n := range agent.CLIAgents() {
		if p, _ := agent.LookupProfile(n); p.Sandbox.Kind != agent.SandboxWrapped && p.Sandbox.Hides == agent.HideWrap && p.Sandbox.HidesCredentials(runtime.GOOS) {
			name = n
		}
	}
	if name == "" {
		t.Skipf("no agent is wrapped on %s", runtime.GOOS)
	}
	root, home := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	tc, _ := fakeTmux(func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stdout: "%1\n"} })
	var got *confine.Policy
	sp := &Spawner{Tmux: tc, Exe: "/opt/sa/story-automator", Environ: []string{"PATH=/bin", "HOME=" + home},
		Wrap: func(p confine.Policy, argv []string) ([]string, error) {
			got = &p
			return append([]string{"wrapped", "--"}, argv...), nil
		}}
	req := spawnRequest(root)
	req.Agent, req.ReadDeny = name, []string{"~/.config/rclone", "/srv/keys"}
	sess, err := sp.Spawn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := TakeSpec(req.StateDir, sess.Name)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := agent.LookupProfile(name)
	if got == nil || !slices.Equal(spec.Argv[:3], []string{"wrapped", "--", p.Program}) {
		t.Fatalf("argv %q: not wrapped", spec.Argv)
	}
	want := append(confine.CredentialPaths(home), filepath.Join(home, ".config/rclone"), "/srv/keys")
	if !slices.Equal(got.ReadDeny, want) || !got.Network || !got.Nests || !slices.Equal(got.Writable, []string{home, root}) {
		t.Fatalf("policy %+v", got)
	}
	// Unconfined (--sandbox off), nothing is wrapped.
	got = nil
	req.Unconfined = true
	if _, err := sp.Spawn(context.Background(), req); err != nil || got != nil {
		t.Fatalf("unconfined: %v, wrapped %+v", err, got)
	}
}

// A custom command has no sandbox of its own, so a confined one runs
// inside this tool's with the policy every child gets: its folder and its
// .git writable but for the hooks and config, a private /tmp, the
// credentials hidden, and no network but the hosts the workflow lists,
// through the wrap's proxy.
func TestSpawnConfinesACustomCommandInThisToolsSandbox(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(root, ".git", "hooks")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".git", "config"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tc, _ := fakeTmux(func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stdout: "%1\n"} })
	var got *confine.Policy
	sp := &Spawner{Tmux: tc, Exe: "/opt/sa/story-automator", Environ: []string{"PATH=/bin", "HOME=" + home},
		Wrap: func(p confine.Policy, argv []string) ([]string, error) {
			got = &p
			return append([]string{"wrapped", "--"}, argv...), nil
		}}
	req := spawnRequest(root)
	req.Agent, req.Command = agent.AgentCustom, "sh -c 'echo {prompt}'"
	sess, err := sp.Spawn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := TakeSpec(req.StateDir, sess.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || !slices.Equal(spec.Argv[:4], []string{"wrapped", "--", "sh", "-c"}) {
		t.Fatalf("argv %q: not wrapped", spec.Argv)
	}
	git := filepath.Join(root, ".git")
	// Its .git is inside its folder, so writable with it.
	if !slices.Equal(got.Writable, []string{root}) || got.Network || got.Net != nil || got.Nests ||
		got.TmpDir != filepath.Join(SandboxFilesPath(req.StateDir, sess.Name), "tmp") ||
		!slices.Contains(got.ReadOnly, filepath.Join(git, "hooks")) || !slices.Contains(got.ReadOnly, filepath.Join(git, "config")) ||
		!slices.Contains(got.ReadDeny, filepath.Join(home, ".ssh")) {
		t.Fatalf("policy %+v", got)
	}
	if fi, err := os.Stat(got.TmpDir); err != nil || !fi.IsDir() {
		t.Fatalf("private temp dir: %v", err)
	}
	// The workflow's hosts are let through the wrap's proxy, and only they.
	got = nil
	req.Network = []string{"registry.npmjs.org", "*.pypi.org"}
	sess, err = sp.Spawn(context.Background(), req)
	if err != nil || got == nil || got.Network || got.Net == nil || !slices.Equal(got.Net.Allow, req.Network) ||
		got.Net.Exe != sp.Exe || got.Net.Log != NetworkLogPath(req.StateDir, sess.Name) {
		t.Fatalf("with sandbox.network: %v, policy %+v, net %+v", err, got, got.Net)
	}
	// Unconfined (--sandbox off), nothing is wrapped.
	got = nil
	req.Unconfined = true
	if _, err := sp.Spawn(context.Background(), req); err != nil || got != nil {
		t.Fatalf("unconfined: %v, wrapped %+v", err, got)
	}
}

// A CLI wrapped whole that calls its model API itself (OpenCode, which
// has no sandbox of its own; Copilot CLI, whose own cannot hold the
// policy) runs inside this tool's sandbox, its network narrowed to its
// model endpoint and the workflow's hosts, with the
// folders it writes itself under HOME and the cache folder (created),
// besides the child's folder, never HOME; its argv is its confined start.
func TestSpawnWrapsACLIWholeWithItsNetworkAndItsOwnFolders(t *testing.T) {
	var names []string
	for _, n := range agent.CLIAgents() {
		if q, _ := agent.LookupProfile(n); q.Sandbox.Kind == agent.SandboxWrapped && q.Sandbox.Model != nil && q.Sandbox.SupportsOS(runtime.GOOS) {
			names = append(names, n)
		}
	}
	if len(names) < 2 {
		t.Fatalf("CLI agents wrapped whole with the network on %s: %v, want one with a hook of ours and one without", runtime.GOOS, names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p, _ := agent.LookupProfile(name)
			root, home := t.TempDir(), t.TempDir()
			tc, _ := fakeTmux(func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stdout: "%1\n"} })
			var got *confine.Policy
			sp := &Spawner{Tmux: tc, Exe: "/opt/sa/story-automator", Environ: []string{"PATH=/bin", "HOME=" + home},
				Wrap: func(pol confine.Policy, argv []string) ([]string, error) {
					got = &pol
					return append([]string{"wrapped", "--"}, argv...), nil
				}}
			for _, rel := range p.Sandbox.WrapPrivate {
				for _, f := range []string{"opencode.json", "plugin/mine.js", "node_modules/pkg/index.js"} {
					f = filepath.Join(home, rel, f)
					if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(f, []byte(`{"user":1}`), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			req := spawnRequest(root)
			req.Agent, req.Network = p.Name, []string{"*.pypi.org"}
			sess, err := sp.Spawn(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			spec, err := TakeSpec(req.StateDir, sess.Name)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{"wrapped", "--", p.Program}, p.ArgsFor(true)...)
			if got == nil || !slices.Equal(spec.Argv[:len(want)], want) {
				t.Fatalf("argv %q, want it to start %q", spec.Argv, want)
			}
			if got.Network || got.Nests || got.Writable[0] != root || got.Net == nil ||
				!slices.Equal(got.Net.Allow, append(slices.Clone(p.Sandbox.Model.Hosts), "*.pypi.org")) {
				t.Fatalf("policy %+v", got)
			}
			own := []string{filepath.Join(home, ".cache", p.Sandbox.CacheDir)}
			if p.Sandbox.CacheDir == "" {
				own = nil
			}
			for _, rel := range p.Sandbox.WrapWrites {
				own = append(own, filepath.Join(home, rel))
			}
			for _, d := range own {
				if fi, err := os.Stat(d); err != nil || !fi.IsDir() || !slices.Contains(got.Writable, d) {
					t.Fatalf("its own folder %s: %v, policy %+v", d, err, got)
				}
			}
			// Its config folder: a private copy mounted over it (its
			// files, not the packages it installs again), never writable.
			if len(got.Over) != len(p.Sandbox.WrapPrivate) {
				t.Fatalf("private copies %+v, want one of each of %q", got.Over, p.Sandbox.WrapPrivate)
			}
			for i, rel := range p.Sandbox.WrapPrivate {
				m := got.Over[i]
				if m.Dst != filepath.Join(home, rel) || !strings.HasPrefix(m.Src, SandboxFilesPath(req.StateDir, sess.Name)+"/") ||
					slices.Contains(got.Writable, m.Dst) {
					t.Fatalf("private copy %+v of %s; writable %q", m, rel, got.Writable)
				}
				for f, want := range map[string]bool{"opencode.json": true, "plugin/mine.js": true, "node_modules": false} {
					if _, err := os.Stat(filepath.Join(m.Src, f)); (err == nil) != want {
						t.Errorf("%s in the private copy: %v, want present %v", f, err, want)
					}
				}
			}
			if slices.Contains(got.Writable, home) {
				t.Fatalf("HOME writable: %+v", got)
			}
			if !slices.Contains(spec.Env, "PWD="+root) {
				t.Fatalf("env %q: no PWD naming its folder", spec.Env)
			}
		})
	}
}

// A CLI's model endpoint: the host and port of the base URL its variable
// or its config file names, else its default hosts.
func TestModelAllowReadsTheBaseURLElseTheDefaultHosts(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	m := &agent.ModelEndpoint{Hosts: []string{"api.example.com"}, URLEnv: []string{"X_BASE_URL"}, URLFile: "x/x.json", URLKey: "baseURL"}
	check := func(want ...string) {
		t.Helper()
		got, err := modelAllow(m, getenv)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("modelAllow = %q, %v; want %q", got, err, want)
		}
	}
	check("api.example.com")
	env["X_BASE_URL"] = "http://127.0.0.1:4000/v1"
	check("127.0.0.1:4000")
	cfg := filepath.Join(home, ".config", "x", "x.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"provider":{"a":{"options":{"baseURL":"https://llm.corp.example/v1"}},"b":{"options":{"baseURL":"http://[::1]:8080"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	check("127.0.0.1:4000", "[::1]:8080", "llm.corp.example:443")
	// XDG_CONFIG_HOME names the config folder.
	env["XDG_CONFIG_HOME"] = t.TempDir()
	check("127.0.0.1:4000")
	delete(env, "X_BASE_URL")
	check("api.example.com")
	if err := os.MkdirAll(filepath.Join(env["XDG_CONFIG_HOME"], "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env["XDG_CONFIG_HOME"], "x", "x.json"), []byte("// a comment\n{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ce *coded.Error
	if _, err := modelAllow(m, getenv); !errors.As(err, &ce) || ce.Code != confine.CodeSandboxUnavailable || !strings.Contains(ce.Action, "sandbox.network") {
		t.Fatalf("a config it cannot read: %v, want a coded error naming the fix", err)
	}
	env["XDG_CONFIG_HOME"], env["X_BASE_URL"] = "", "file:///etc/passwd"
	if _, err := modelAllow(m, getenv); err == nil {
		t.Fatal("a base URL that is not http(s) was accepted")
	}
	if got, err := modelAllow(nil, getenv); got != nil || err != nil {
		t.Fatalf("no model endpoint: %q, %v", got, err)
	}
}
