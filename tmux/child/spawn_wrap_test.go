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
		if p, _ := agent.LookupProfile(n); p.Sandbox.Kind != agent.SandboxWrap && p.Sandbox.Hides == agent.HideWrap && p.Sandbox.HidesCredentials(runtime.GOOS) {
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
	if !slices.Equal(got.Writable, []string{root, git}) || got.Network || got.Nests ||
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

// A CLI with no sandbox of its own that calls its model API itself runs
// inside this tool's with the network and with the folders it writes
// itself under HOME (created), besides the child's folder; its argv is
// its unattended start, the same confined or not.
func TestSpawnWrapsACLIWithNoSandboxOfItsOwn(t *testing.T) {
	var p agent.Profile
	for _, n := range agent.CLIAgents() {
		if q, _ := agent.LookupProfile(n); q.Sandbox.Kind == agent.SandboxWrap && q.Sandbox.WrapNetwork {
			p = q
		}
	}
	if p.Name == "" {
		t.Fatal("no CLI agent runs under this tool's sandbox alone")
	}
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
	want := append([]string{"wrapped", "--", p.Program}, p.Args...)
	if got == nil || !slices.Equal(spec.Argv[:len(want)], want) {
		t.Fatalf("argv %q, want it to start %q", spec.Argv, want)
	}
	if !got.Network || got.Nests || got.Writable[0] != root || len(got.Writable) != 1+len(p.Sandbox.WrapWrites) {
		t.Fatalf("policy %+v", got)
	}
	for i, rel := range p.Sandbox.WrapWrites {
		d := filepath.Join(home, rel)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || got.Writable[1+i] != d {
			t.Fatalf("its own folder %s: %v, policy %+v", d, err, got)
		}
	}
	if !slices.Contains(spec.Env, "PWD="+root) {
		t.Fatalf("env %q: no PWD naming its folder", spec.Env)
	}
}
