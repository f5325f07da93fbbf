package child

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/sessionstate"
	"github.com/story-automator/story-automator/tmux"
)

func fakeTmux(newSession func(tmux.FakeCall) tmux.FakeResult) (*tmux.Client, *tmux.FakeExecutor) {
	fx := &tmux.FakeExecutor{Handle: func(c tmux.FakeCall) tmux.FakeResult {
		for _, a := range c.Args {
			switch a {
			case "-V":
				return tmux.FakeResult{Stdout: "tmux 3.3a\n"}
			case "new-session":
				return newSession(c)
			}
		}
		return tmux.FakeResult{}
	}}
	return &tmux.Client{Exec: fx, Socket: "t"}, fx
}

func spawnRequest(root string) Request {
	return Request{ProjectRoot: root, StateDir: filepath.Join(root, ".story-automator", "sessions"),
		Story: "1.2", Step: "dev", Agent: agent.AgentSim,
		Prompt: "do it; \"now\" $(rm -rf ~) `id`\nsecond line ;"}
}

func TestSpawnKeepsUserTextOutOfTmuxAndWritesPrivateFiles(t *testing.T) {
	root := t.TempDir()
	tc, fx := fakeTmux(func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stdout: "%3\n"} })
	sp := &Spawner{Tmux: tc, Exe: "/opt/sa/story-automator", Rand: bytes.NewReader([]byte{1, 2, 3, 4}),
		Environ: []string{"PATH=/bin", "CLAUDECODE=1", "TMUX=/x"}, Now: func() time.Time { return time.Unix(0, 0) }}
	req := spawnRequest(root)
	sess, err := sp.Spawn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if sess.PaneID != "%3" || !strings.HasSuffix(sess.Name, "-e1-s1-2-dev-bcde") {
		t.Fatalf("%+v", sess)
	}
	var newSession []string
	for _, c := range fx.Calls() {
		for _, a := range c.Args {
			if strings.Contains(a, "rm -rf") || strings.Contains(a, "second line") {
				t.Fatalf("prompt reached tmux argv: %q", c.Args)
			}
		}
		if len(c.Args) > 2 && c.Args[2] == "new-session" {
			newSession = c.Args
		}
	}
	wantTail := []string{"--", "/opt/sa/story-automator", RunnerCommand, "--state-dir", req.StateDir, sess.Name}
	if len(newSession) < len(wantTail) || strings.Join(newSession[len(newSession)-len(wantTail):], "\x00") != strings.Join(wantTail, "\x00") {
		t.Fatalf("new-session argv %q", newSession)
	}
	fi, err := os.Stat(req.StateDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir %v %v", fi.Mode(), err)
	}
	for _, p := range []string{sess.StateFile, sess.OutputFile, SpecPath(req.StateDir, sess.Name)} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", p, fi, err)
		}
	}
	st, err := sessionstate.Read(req.StateDir, sess.Name)
	if err != nil || st.Lifecycle != LifecycleStarting || st.PaneID != "%3" || st.Agent != agent.AgentSim || st.Epic != "1" || st.OutputFile != sess.OutputFile {
		t.Fatalf("state %+v %v", st, err)
	}
	spec, err := TakeSpec(req.StateDir, sess.Name)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Argv[len(spec.Argv)-1] != req.Prompt || spec.Dir != root {
		t.Fatalf("spec %+v", spec)
	}
	env := strings.Join(spec.Env, "\n")
	for _, want := range []string{"STORY_AUTOMATOR_CHILD=true", "STORY_AUTOMATOR_SESSION=" + sess.Name,
		"STORY_AUTOMATOR_STATE_DIR=" + req.StateDir, "PROJECT_ROOT=" + root, "PATH=/bin", "UV_PYTHON_DOWNLOADS=never"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	if strings.Contains(env, "CLAUDECODE") || strings.Contains(env, "TMUX=") {
		t.Errorf("env leaks: %q", spec.Env)
	}
	if _, err := os.Stat(SpecPath(req.StateDir, sess.Name)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("TakeSpec left the spec behind")
	}
}

func TestFailedSpawnLeavesNothingBehind(t *testing.T) {
	root := t.TempDir()
	tc, _ := fakeTmux(func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stderr: "duplicate session: x", Exit: 1} })
	sp := &Spawner{Tmux: tc, Exe: "/opt/sa/story-automator"}
	req := spawnRequest(root)
	if _, err := sp.Spawn(context.Background(), req); !errors.Is(err, tmux.ErrDuplicateSession) {
		t.Fatalf("got %v", err)
	}
	left, _ := os.ReadDir(req.StateDir)
	if len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestSpawnWritesThePromptFileForTemplates(t *testing.T) {
	root := t.TempDir()
	tc, _ := fakeTmux(func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stdout: "%1"} })
	sp := &Spawner{Tmux: tc, Exe: "/x"}
	req := spawnRequest(root)
	req.Agent, req.Command, req.Unconfined = agent.AgentCustom, "tool --in {prompt_file}", true
	sess, err := sp.Spawn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(PromptPath(req.StateDir, sess.Name))
	if err != nil || string(got) != req.Prompt {
		t.Fatalf("prompt file %q %v", got, err)
	}
	raw, _ := os.ReadFile(SpecPath(req.StateDir, sess.Name))
	var spec Spec
	if json.Unmarshal(raw, &spec) != nil || spec.Argv[2] != PromptPath(req.StateDir, sess.Name) {
		t.Fatalf("spec %s", raw)
	}
}

func TestSpawnRefusesUnknownAgentAndOldTmux(t *testing.T) {
	root := t.TempDir()
	tc, _ := fakeTmux(nil)
	sp := &Spawner{Tmux: tc, Exe: "/x"}
	req := spawnRequest(root)
	req.Agent = "nope"
	if _, err := sp.Spawn(context.Background(), req); !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("got %v", err)
	}
	old := &tmux.Client{Exec: &tmux.FakeExecutor{Handle: func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stdout: "tmux 2.6"} }}}
	sp.Tmux = old
	if _, err := sp.Spawn(context.Background(), spawnRequest(root)); !errors.Is(err, tmux.ErrTooOld) {
		t.Fatalf("got %v", err)
	}
}

func TestSpawnRetriesWhenTheServerWasExiting(t *testing.T) {
	root := t.TempDir()
	calls := 0
	tc, _ := fakeTmux(func(tmux.FakeCall) tmux.FakeResult {
		calls++
		if calls == 1 {
			return tmux.FakeResult{Stderr: "server exited unexpectedly", Exit: 1}
		}
		return tmux.FakeResult{Stdout: "%9"}
	})
	sp := &Spawner{Tmux: tc, Exe: "/x"}
	sess, err := sp.Spawn(context.Background(), spawnRequest(root))
	if err != nil || sess.PaneID != "%9" || calls != 2 {
		t.Fatalf("%+v %v after %d calls", sess, err, calls)
	}
}

func TestSpawnKillsTheSessionWhenItsStateCannotBeRecorded(t *testing.T) {
	root := t.TempDir()
	req := spawnRequest(root)
	tc, fx := fakeTmux(func(c tmux.FakeCall) tmux.FakeResult {
		// Once tmux has created the session, its state file becomes unreadable.
		name := c.Args[5]
		state := sessionstate.StatePath(req.StateDir, name)
		if err := os.Remove(state); err != nil {
			t.Error(err)
		}
		if err := os.Mkdir(state, 0o700); err != nil {
			t.Error(err)
		}
		return tmux.FakeResult{Stdout: "%5\n"}
	})
	sp := &Spawner{Tmux: tc, Exe: "/x"}
	if _, err := sp.Spawn(context.Background(), req); err == nil {
		t.Fatal("spawn reported success without a state file")
	}
	var created, killed string
	for _, c := range fx.Calls() {
		switch c.Args[2] {
		case "new-session":
			created = c.Args[5]
		case "kill-session":
			killed = c.Args[4]
		}
	}
	if created == "" || killed != "="+created {
		t.Fatalf("created %q, killed %q: the agent was left running", created, killed)
	}
}

// --trust-project lets the monitor answer the agent's trust dialog (Claude)
// or trusts the folder through the environment (Gemini); without it neither.
func TestSpawnTrustProjectIsRecordedPerSession(t *testing.T) {
	for _, tc := range []struct {
		agent      string
		trust      bool
		wantAccept []string
		wantEnv    string
	}{
		{agent.AgentClaude, true, []string{agent.DialogTrustFolder}, ""},
		{agent.AgentClaude, false, nil, ""},
		{agent.AgentGemini, true, nil, "GEMINI_CLI_TRUST_WORKSPACE=true"},
		{agent.AgentGemini, false, nil, ""},
	} {
		root := t.TempDir()
		tc2, _ := fakeTmux(func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stdout: "%1\n"} })
		sp := &Spawner{Tmux: tc2, Exe: "/opt/sa/story-automator", Environ: []string{"PATH=/bin"}}
		req := spawnRequest(root)
		req.Agent, req.TrustProject = tc.agent, tc.trust
		sess, err := sp.Spawn(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		st, err := sessionstate.Read(req.StateDir, sess.Name)
		if err != nil || strings.Join(st.AcceptDialogs, ",") != strings.Join(tc.wantAccept, ",") {
			t.Errorf("%s trust=%v: accept %v, want %v (%v)", tc.agent, tc.trust, st.AcceptDialogs, tc.wantAccept, err)
		}
		spec, err := TakeSpec(req.StateDir, sess.Name)
		if err != nil {
			t.Fatal(err)
		}
		env := strings.Join(spec.Env, "\n")
		if has := strings.Contains(env, "GEMINI_CLI_TRUST_WORKSPACE"); has != (tc.wantEnv != "") || (has && !strings.Contains(env, tc.wantEnv)) {
			t.Errorf("%s trust=%v: env %q", tc.agent, tc.trust, spec.Env)
		}
	}
}

func TestSpawnRunsTheChildInItsWorkDirWithTheProjectsState(t *testing.T) {
	root, wt := t.TempDir(), t.TempDir()
	tc, _ := fakeTmux(func(tmux.FakeCall) tmux.FakeResult { return tmux.FakeResult{Stdout: "%1\n"} })
	sp := &Spawner{Tmux: tc, Exe: "/opt/sa/story-automator", Environ: []string{"PATH=/bin"}}
	req := spawnRequest(root)
	req.WorkDir = wt
	sess, err := sp.Spawn(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := TakeSpec(req.StateDir, sess.Name)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(spec.Env, "\n")
	if spec.Dir != wt || !strings.Contains(env, "PROJECT_ROOT="+root+"\n") || !strings.Contains(env, EnvWorkDir+"="+wt) {
		t.Fatalf("dir %s, env %q: want the child in %s with PROJECT_ROOT=%s", spec.Dir, spec.Env, wt, root)
	}
	st, err := sessionstate.Read(req.StateDir, sess.Name)
	if err != nil || st.ProjectRoot != root {
		t.Fatalf("session state project %q (%v), want %s", st.ProjectRoot, err, root)
	}
	req.WorkDir = "relative/dir"
	if _, err := sp.Spawn(context.Background(), req); err == nil {
		t.Fatal("a relative work dir was accepted")
	}
}
