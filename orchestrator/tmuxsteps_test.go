package orchestrator

import (
	"slices"
	"testing"

	"github.com/story-automator/story-automator/agentsim"
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
