package agent

import "testing"

// Each CLI is told to run a skill in its own form.
func TestSkillPromptInEachCLIsForm(t *testing.T) {
	cases := map[string]string{
		AgentClaude:   "/bmad-build-auto 1-2-account-settings",
		AgentCodex:    "$bmad-build-auto 1-2-account-settings",
		AgentGemini:   "Use the skill bmad-build-auto (activate it with activate_skill) for: 1-2-account-settings",
		AgentCopilot:  "Use the skill bmad-build-auto (load it with the skill tool) for: 1-2-account-settings",
		AgentSim:      "/bmad-build-auto 1-2-account-settings",
		AgentOpenCode: "Use the skill bmad-build-auto (load it with the skill tool) for: 1-2-account-settings",
	}
	for name, want := range cases {
		if got, ok := SkillPrompt(name, "bmad-build-auto", "1-2-account-settings"); !ok || got != want {
			t.Errorf("%s: %q, %v; want %q", name, got, ok, want)
		}
	}
	if got, ok := SkillPrompt(AgentCustom, "bmad-build-auto", "x"); ok {
		t.Errorf("custom: %q; a template agent has no skill form", got)
	}
}
