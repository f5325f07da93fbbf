package tmuxsteps

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/hosts/hoststest"
	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/workflows"
)

// A child on a host gets the settings its agent's profile names from the
// run's environment, and nothing else of it.
func TestARemoteChildGetsTheSettingsItsProfileNames(t *testing.T) {
	r := NewRemote(&Runner{Environ: []string{agent.EnvSimDelay + "=2s", agent.EnvSimFaults + "=dev:crash",
		"STORY_AUTOMATOR_SIM_LOG=/home/me/sim.log", "HOME=/home/me"}}, nil, "proj-12345678", nil)
	env := r.childEnv(orchestrator.StepRequest{Agent: agent.AgentSim, RunID: "run-1", Attempt: 1, Role: "primary"})
	for _, want := range []string{agent.EnvSimDelay + "=2s", agent.EnvSimFaults + "=dev:crash", agent.EnvSimBehaviour + "=bmad"} {
		if !strings.Contains(env, want) {
			t.Errorf("the sim child's env %q lacks %s", env, want)
		}
	}
	for _, not := range []string{"SIM_LOG", "HOME="} {
		if strings.Contains(env, not) {
			t.Errorf("the sim child's env %q has %s", env, not)
		}
	}
	if env := r.childEnv(orchestrator.StepRequest{Agent: agent.AgentCustom, RunID: "run-1", Attempt: 1}); strings.Contains(env, "SIM_") {
		t.Errorf("a custom child's env %q has the sim's settings", env)
	}
}

// Before any agent starts, a host whose story-automator is missing or
// another version refuses the run with the install command; one that does
// not answer is left to the run's lost-host handling.
func TestCheckInstalledRefusesAHostWithoutThisVersion(t *testing.T) {
	for _, c := range []struct {
		name string
		rep  hoststest.Reply
		down bool
		code string
	}{
		{name: "same", rep: hoststest.Reply{Stdout: "story-automator v1.2.3 go1.26.8\n"}},
		{name: "missing", rep: hoststest.Reply{}, code: CodeHostNotInstalled},
		{name: "other", rep: hoststest.Reply{Stdout: "story-automator v1.0.0 go1.26.8\n"}, code: CodeHostVersionMismatch},
		{name: "down", down: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fake := &hoststest.Executor{Answer: func(argv []string, _ []byte) hoststest.Reply {
				switch op := hoststest.Op(argv); {
				case c.down && (op == "check" || op == "master"):
					return hoststest.Reply{Exit: 255, Stderr: "ssh: connect to host box port 22: Connection refused"}
				case op == "check" || op == "master":
					return hoststest.Reply{}
				case !strings.Contains(op, "/srv/sa/bin/story-automator") || !strings.Contains(op, "--version"):
					t.Errorf("unexpected ssh call %q", argv)
				}
				return c.rep
			}}
			h, err := hosts.New(workflows.Host{Name: "box", SSH: "me@box", Dir: "/srv/sa"}, hosts.Options{ControlDir: filepath.Join(t.TempDir(), "ssh"), Exec: fake})
			if err != nil {
				t.Fatal(err)
			}
			r := NewRemote(&Runner{}, h, "proj-12345678", nil)
			r.Version = "v1.2.3 go1.26.8"
			err = (&Runner{Remotes: map[string]*Remote{"box": r}}).CheckAgents(context.Background(), nil)
			var b *orchestrator.Blocker
			switch {
			case c.code == "" && err != nil:
				t.Fatalf("err %v", err)
			case c.code != "" && (!errors.As(err, &b) || b.Code != c.code || b.Action != "story-automator hosts install box"):
				t.Fatalf("err %v, want a %s blocker", err, c.code)
			}
		})
	}
}
