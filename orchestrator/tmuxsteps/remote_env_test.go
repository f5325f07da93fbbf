package tmuxsteps

import (
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/orchestrator"
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
