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
	for _, want := range []string{"HOME=/home/u", EnvAttempt + "=4", EnvCycle + "=2", EnvRole + "=fallback", EnvRunID + "=run-x",
		EnvSimBehaviour + "=" + agentsim.BehaviourBMAD} {
		if !slices.Contains(env, want) {
			t.Fatalf("child environment lacks %s: %v", want, env)
		}
	}
	ts.Environ = []string{EnvSimBehaviour + "=hang"}
	if env := ts.childEnviron(StepRequest{Agent: child.AgentSim}); slices.Contains(env, EnvSimBehaviour+"="+agentsim.BehaviourBMAD) {
		t.Fatalf("a behaviour chosen by the user was overridden: %v", env)
	}
	if env := ts.childEnviron(StepRequest{Agent: child.AgentClaude}); slices.ContainsFunc(env, func(kv string) bool { return kv == EnvSimBehaviour+"="+simBMAD }) {
		t.Fatal("a real agent got the sim behaviour")
	}
}

func TestTheSimReadsTheVariablesTheOrchestratorAndSpawnerSet(t *testing.T) {
	pairs := [][2]string{{EnvAttempt, agentsim.EnvAttempt}, {EnvCycle, agentsim.EnvCycle}, {EnvRole, agentsim.EnvRole},
		{child.EnvStep, agentsim.EnvStep}, {child.EnvStory, agentsim.EnvStory}, {child.EnvEpic, agentsim.EnvEpic},
		{EnvSimBehaviour, agentsim.EnvBehaviour}}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Fatalf("the orchestrator sets %s but the sim reads %s", p[0], p[1])
		}
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
