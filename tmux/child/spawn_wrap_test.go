package child

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/story-automator/story-automator/agent"
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
// credentials hidden, and no network unless the workflow lists hosts.
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
	if !slices.Equal(got.Writable, []string{root}) || got.Network || got.Nests ||
		got.TmpDir != filepath.Join(SandboxFilesPath(req.StateDir, sess.Name), "tmp") ||
		!slices.Contains(got.ReadOnly, filepath.Join(git, "hooks")) || !slices.Contains(got.ReadOnly, filepath.Join(git, "config")) ||
		!slices.Contains(got.ReadDeny, filepath.Join(home, ".ssh")) {
		t.Fatalf("policy %+v", got)
	}
	if fi, err := os.Stat(got.TmpDir); err != nil || !fi.IsDir() {
		t.Fatalf("private temp dir: %v", err)
	}
	// The workflow's hosts give it the network (all of it: the wrap cannot pick hosts).
	got = nil
	req.Network = []string{"registry.npmjs.org"}
	if _, err := sp.Spawn(context.Background(), req); err != nil || got == nil || !got.Network {
		t.Fatalf("with sandbox.network: %v, policy %+v", err, got)
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
// policy) runs inside this tool's sandbox with the network and with the
// folders it writes itself under HOME and the cache folder (created),
// besides the child's folder, never HOME; its argv is its confined start.
func TestSpawnWrapsACLIWholeWithItsNetworkAndItsOwnFolders(t *testing.T) {
	var names []string
	for _, n := range agent.CLIAgents() {
		if q, _ := agent.LookupProfile(n); q.Sandbox.Kind == agent.SandboxWrapped && q.Sandbox.NetworkOpen && q.Sandbox.SupportsOS(runtime.GOOS) {
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
			req := spawnRequest(root)
			req.Agent = p.Name
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
			if !got.Network || got.Nests || got.Writable[0] != root {
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
			if slices.Contains(got.Writable, home) {
				t.Fatalf("HOME writable: %+v", got)
			}
			if !slices.Contains(spec.Env, "PWD="+root) {
				t.Fatalf("env %q: no PWD naming its folder", spec.Env)
			}
		})
	}
}
