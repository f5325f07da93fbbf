package orchestrator

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agentsim"
	"github.com/story-automator/story-automator/marker"
	"github.com/story-automator/story-automator/tmux"
	"github.com/story-automator/story-automator/tmux/child"
)

func TestChildEnvironmentCarriesTheAttemptAndPicksTheBMADSim(t *testing.T) {
	ts := &TmuxSteps{Environ: []string{"HOME=/home/u"}}
	env := ts.childEnviron(StepRequest{Step: StepReview, Agent: child.AgentSim, Attempt: 4, Cycle: 2, Role: RoleFallback, RunID: "run-x"})
	sim := agentsim.EnvBehaviour + "=" + agentsim.BehaviourBMAD
	for _, want := range []string{"HOME=/home/u", child.EnvAttempt + "=4", child.EnvCycle + "=2", child.EnvRole + "=fallback",
		child.EnvRunID + "=run-x", sim} {
		if !slices.Contains(env, want) {
			t.Fatalf("child environment lacks %s: %v", want, env)
		}
	}
	ts.Environ = []string{agentsim.EnvBehaviour + "=hang"}
	if env := ts.childEnviron(StepRequest{Agent: child.AgentSim}); slices.Contains(env, sim) {
		t.Fatalf("a behaviour chosen by the user was overridden: %v", env)
	}
	if env := ts.childEnviron(StepRequest{Agent: child.AgentClaude}); slices.Contains(env, sim) {
		t.Fatal("a real agent got the sim behaviour")
	}
}

// killedTmux answers every tmux call with success: the session is gone.
type killedTmux struct{}

func (killedTmux) Run(context.Context, tmux.Command) ([]byte, []byte, error) { return nil, nil, nil }

func TestCloseSessionWaitsForTheAgentAndKillsOneThatLingers(t *testing.T) {
	// An agent that ignores the hang-up of its closed session.
	agent := exec.Command("sh", "-c", "trap '' HUP TERM; while :; do sleep 1; done")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = agent.Wait(); close(exited) }()
	t.Cleanup(func() { _ = agent.Process.Kill() })
	dir := t.TempDir()
	if _, err := marker.UpdateSession(dir, "sa-1-1-dev-1", func(st *marker.SessionState) error {
		st.AgentPid = agent.Process.Pid
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ts := &TmuxSteps{Tmux: &tmux.Client{Exec: killedTmux{}}, StateDir: dir, CloseWait: 100 * time.Millisecond}
	if err := ts.CloseSession(context.Background(), "sa-1-1-dev-1"); err != nil {
		t.Fatal(err)
	}
	select { // reaping our child takes a moment; an agent left running never ends
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the closed session's agent still runs")
	}
}
