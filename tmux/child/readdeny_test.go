package child

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/confine"
)

// Every child is denied the user's credentials under its HOME and the
// workflow's readDeny ("~/" under that HOME), once each; a path holding
// the agent's own state or credentials is left out, so it still signs in.
func TestAChildIsDeniedTheCredentialsAndReadDenyButNotItsOwnState(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"HOME": "/h"}[k] }
	extra := []string{"~/.config/rclone", "/srv/keys/", "~/.ssh", "~/.gemini", "~/.claude.json"}
	for _, name := range agent.CLIAgents() {
		p, _ := agent.LookupProfile(name)
		got := ReadDenied(p, extra, getenv)
		want := append(confine.CredentialPaths("/h"), "/h/.config/rclone", "/srv/keys")
		own := ownPaths(p, getenv)
		for _, x := range []string{"/h/.gemini", "/h/.claude.json"} {
			if !holdsAny(x, own) {
				want = append(want, x)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: denied %q\nwant %q", name, got, want)
		}
		for _, o := range own {
			if holdsAny(o, got) {
				t.Errorf("%s: its own %s is denied", name, o)
			}
		}
	}
	gem, _ := agent.LookupProfile(agent.AgentGemini)
	if got := ReadDenied(gem, []string{"~/.gemini"}, getenv); slices.Contains(got, "/h/.gemini") {
		t.Errorf("Gemini CLI's own state directory is denied: %q", got)
	}
	cl, _ := agent.LookupProfile(agent.AgentClaude)
	if got := ReadDenied(cl, []string{"~/.gemini"}, getenv); !slices.Contains(got, "/h/.gemini") {
		t.Errorf("another agent's state is not Claude Code's own, yet it was left out: %q", got)
	}
}

func TestNoHomeDeniesOnlyTheAbsolutePaths(t *testing.T) {
	p, _ := agent.LookupProfile(agent.AgentCodex)
	got := ReadDenied(p, []string{"~/.x", "/srv/k"}, func(string) string { return "" })
	if !slices.Equal(got, []string{"/srv/k"}) {
		t.Fatalf("%q", got)
	}
}

// A CLI wrapped whole (Copilot CLI) writes its story's worktree, the
// worktree's git dirs, its own state and cache folders, the sessions'
// state folder and its files folder: not HOME, not the project's checkout.
func TestAWrappedCLIWritesItsWorktreeItsStateAndItsCacheOnly(t *testing.T) {
	base := t.TempDir()
	home, project, cache := filepath.Join(base, "home"), filepath.Join(base, "project"), filepath.Join(base, "cache")
	wt, state := filepath.Join(project, ".wt", "1-1"), filepath.Join(project, ".story-automator", "sessions")
	for _, d := range []string{filepath.Join(home, ".copilot"), wt, state} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := agent.LookupProfile(agent.AgentCopilot)
	env := map[string]string{"HOME": home, "XDG_CACHE_HOME": cache}
	getenv := func(k string) string { return env[k] }
	r := Request{ProjectRoot: project, WorkDir: wt, StateDir: state}
	c := &Confine{Dir: wt, GitDirs: []string{filepath.Join(project, ".git", "worktrees", "1-1")}, FilesDir: filepath.Join(state, "x.sandbox")}
	for _, d := range append(c.GitDirs, c.FilesDir) {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got, err := cliWrites(p, r, c, getenv)
	want := []string{wt, c.GitDirs[0], filepath.Join(home, ".copilot"), state, filepath.Join(cache, "copilot")}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("writes %q, want %q", got, want)
	}
	if fi, err := os.Stat(filepath.Join(cache, "copilot")); err != nil || !fi.IsDir() {
		t.Fatalf("the cache folder was not made: %v", err)
	}
}

// A CLI wrapped whole with no hook of ours inside the wrap (OpenCode)
// writes its folder, its git dirs and the folders it writes itself under
// HOME and the cache folder (made), not the sessions' state folder; a
// custom command, which has no state directory, not even that: never HOME.
func TestAWrappedCLIWithNoHookWritesNeitherTheSessionsStateNorHOME(t *testing.T) {
	base := t.TempDir()
	home, project, cache := filepath.Join(base, "home"), filepath.Join(base, "project"), filepath.Join(base, "cache")
	wt, state := filepath.Join(project, ".wt", "1-1"), filepath.Join(project, ".story-automator", "sessions")
	gitdir := filepath.Join(project, ".git", "worktrees", "1-1")
	for _, d := range []string{home, wt, gitdir, state} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "XDG_CACHE_HOME": cache}
	getenv := func(k string) string { return env[k] }
	r := Request{ProjectRoot: project, WorkDir: wt, StateDir: state}
	c := &Confine{Dir: wt, GitDirs: []string{gitdir}, FilesDir: filepath.Join(state, "x.sandbox")}

	custom, _ := agent.LookupProfile(agent.AgentCustom)
	if got, err := cliWrites(custom, r, c, getenv); err != nil || !reflect.DeepEqual(got, []string{wt, gitdir}) {
		t.Fatalf("custom writes %q (%v), want only its worktree and its git dir", got, err)
	}

	p, _ := agent.LookupProfile(agent.AgentOpenCode)
	if p.ChildHook != "" || len(p.Sandbox.WrapWrites) == 0 || p.Sandbox.CacheDir == "" {
		t.Fatalf("the test needs a wrapped CLI with no hook, folders of its own and a cache: %+v", p.Sandbox)
	}
	got, err := cliWrites(p, r, c, getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{wt, gitdir}
	for _, rel := range p.Sandbox.WrapWrites {
		want = append(want, filepath.Join(home, rel))
	}
	want = append(want, filepath.Join(cache, p.Sandbox.CacheDir))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("writes %q, want %q", got, want)
	}
	for _, d := range want[2:] {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Fatalf("%s was not made: %v", d, err)
		}
	}
}
