package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/testing/realbmad"
)

// subagentsEnv is a HOME of the test's own and a getenv that reads it.
func subagentsEnv(t *testing.T) (home string, getenv func(string) string) {
	home = t.TempDir()
	return home, func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
}

// writeSettings writes a settings file, making its folder.
func writeSettings(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// With no settings that turn them off, the subagents of every CLI agent
// whose subagent tools are recorded are on, and doctor names the tool that
// runs them; an agent without a model of its own gets no such check.
func TestDoctorSubagentsOnByDefault(t *testing.T) {
	_, getenv := subagentsEnv(t)
	checked := 0
	for _, a := range agent.CLIAgents() {
		p, _ := agent.LookupProfile(a)
		c, ok := checkSubagents(a, Options{Root: t.TempDir(), Getenv: getenv})
		if len(p.Subagents.Tools) == 0 {
			if ok {
				t.Errorf("%s, with no subagent tools recorded, got a check: %+v", a, c)
			}
			continue
		}
		checked++
		if !ok || c.Status != OK || !strings.Contains(c.Detail, p.Subagents.Tools[0]) {
			t.Errorf("%s: %+v %v", a, c, ok)
		}
	}
	if checked < 5 {
		t.Errorf("%d CLI agents have their subagents checked, want Claude Code's, Codex's, Gemini CLI's, GitHub Copilot CLI's and OpenCode's", checked)
	}
	if _, ok := checkSubagents(agent.AgentSim, Options{Root: t.TempDir(), Getenv: getenv}); ok {
		t.Errorf("the simulated agent got a subagents check")
	}
}

// Claude Code: a bare deny rule for the Agent tool (or its old name, Task)
// in any of its settings files turns them off; a rule for one kind of
// subagent does not.
func TestDoctorSubagentsOffByAClaudeDenyRule(t *testing.T) {
	home, getenv := subagentsEnv(t)
	root := t.TempDir()
	writeSettings(t, filepath.Join(root, ".claude/settings.json"), `{"permissions": {"deny": ["Agent(Explore)"]}}`)
	if c, _ := checkSubagents(agent.AgentClaude, Options{Root: root, Getenv: getenv}); strings.Contains(c.Detail, "subagents are off") {
		t.Fatalf("one kind denied: %+v", c)
	}
	user := filepath.Join(home, ".claude/settings.json")
	writeSettings(t, user, `{"permissions": {"deny": ["Task"]}}`)
	c, _ := checkSubagents(agent.AgentClaude, Options{Root: root, Getenv: getenv})
	if !strings.Contains(c.Detail, `subagents are off: permissions.deny has "Task" in `+user) || !strings.Contains(c.Fix, user) {
		t.Fatalf("denied: %+v", c)
	}
}

// Codex: features.multi_agent = false in its config.toml turns them off;
// a project's config that turns them back on wins.
func TestDoctorSubagentsOffByCodexFeature(t *testing.T) {
	home, getenv := subagentsEnv(t)
	root := t.TempDir()
	user := filepath.Join(home, ".codex/config.toml")
	writeSettings(t, user, "model = \"x\"\n[features]\nmulti_agent = false\n")
	c, _ := checkSubagents(agent.AgentCodex, Options{Root: root, Getenv: getenv})
	if !strings.Contains(c.Detail, "subagents are off: features.multi_agent = false in "+user) {
		t.Fatalf("off: %+v", c)
	}
	writeSettings(t, filepath.Join(root, ".codex/config.toml"), "[features]\nmulti_agent = true\n")
	if c, _ := checkSubagents(agent.AgentCodex, Options{Root: root, Getenv: getenv}); strings.Contains(c.Detail, "subagents are off") {
		t.Fatalf("back on: %+v", c)
	}
}

// Gemini CLI: experimental.enableAgents = false turns them off; a settings
// file that cannot be parsed is named, not taken as on.
func TestDoctorSubagentsOffByGeminiSetting(t *testing.T) {
	_, getenv := subagentsEnv(t)
	root := t.TempDir()
	project := filepath.Join(root, ".gemini/settings.json")
	writeSettings(t, project, `{"experimental": {"enableAgents": false}}`)
	c, _ := checkSubagents(agent.AgentGemini, Options{Root: root, Getenv: getenv})
	if !strings.Contains(c.Detail, "subagents are off: experimental.enableAgents = false in "+project) {
		t.Fatalf("off: %+v", c)
	}
	writeSettings(t, project, `{"experimental": `)
	c, _ = checkSubagents(agent.AgentGemini, Options{Root: root, Getenv: getenv})
	if c.Status != Warn || !strings.Contains(c.Detail, "cannot tell") || !strings.Contains(c.Detail, project) {
		t.Fatalf("unparsable: %+v", c)
	}
}

// Subagents off fail doctor on a project that takes the build-auto
// pipeline, whose worker needs them, and only note it on an older one.
func TestDoctorSubagentsOffFailsOnlyTheBuildAutoPipeline(t *testing.T) {
	home, getenv := subagentsEnv(t)
	writeSettings(t, filepath.Join(home, ".gemini/settings.json"), `{"experimental": {"enableAgents": false}}`)
	c, _ := checkSubagents(agent.AgentGemini, Options{Root: realbmad.Project(t), Getenv: getenv})
	if c.Status != Fail || !strings.Contains(c.Detail, "no subagents") {
		t.Fatalf("build-auto: %+v", c)
	}
	c, _ = checkSubagents(agent.AgentGemini, Options{Root: t.TempDir(), Getenv: getenv})
	if c.Status != OK || !strings.Contains(c.Detail, "only BMAD 6.12's worker needs them") {
		t.Fatalf("five-step: %+v", c)
	}
}

// OpenCode: "permission": {"task": "deny"} (or {"task": {"*": "deny"}}, or
// the legacy "tools": {"task": false}) turns them off; a later file that
// allows the tool again turns them back on.
func TestDoctorSubagentsOffByOpenCodePermission(t *testing.T) {
	home, getenv := subagentsEnv(t)
	root := t.TempDir()
	user := filepath.Join(home, ".config/opencode/opencode.json")
	project := filepath.Join(root, "opencode.json")
	for _, tc := range []struct{ data, what string }{
		{`{"permission": {"task": "deny"}}`, `permission.task = "deny"`},
		{`{"permission": {"task": {"*": "deny"}}}`, `permission.task = "deny"`},
		{`{"tools": {"task": false}}`, `tools.task = false`},
	} {
		writeSettings(t, user, tc.data)
		c, _ := checkSubagents(agent.AgentOpenCode, Options{Root: root, Getenv: getenv})
		if !strings.Contains(c.Detail, "subagents are off: "+tc.what+" in "+user) || !strings.Contains(c.Fix, user) {
			t.Errorf("%s: %+v", tc.data, c)
		}
	}
	writeSettings(t, project, `{"permission": {"task": "allow"}}`)
	writeSettings(t, user, `{"permission": {"task": "deny"}}`)
	if c, _ := checkSubagents(agent.AgentOpenCode, Options{Root: root, Getenv: getenv}); c.Status != OK {
		t.Errorf("allowed again by the project: %+v", c)
	}
}

// OpenCode's skill tool runs rg: doctor warns, with the install line, when
// the PATH has none, and says it is found otherwise; an agent whose skill
// tool needs nothing gets no such check.
func TestDoctorSkillToolNeedsRipgrepForOpenCode(t *testing.T) {
	bin := t.TempDir()
	path := bin
	getenv := func(k string) string {
		if k == "PATH" {
			return path
		}
		return ""
	}
	c, ok := checkSkillNeeds(agent.AgentOpenCode, Options{Getenv: getenv})
	if !ok || c.Status != Warn || !strings.Contains(c.Detail, "needs rg") || !strings.Contains(c.Fix, "apt-get install ripgrep") {
		t.Fatalf("no rg: %+v %v", c, ok)
	}
	writeSettings(t, filepath.Join(bin, "rg"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin, "rg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if c, _ := checkSkillNeeds(agent.AgentOpenCode, Options{Getenv: getenv}); c.Status != OK {
		t.Fatalf("rg on PATH: %+v", c)
	}
	if _, ok := checkSkillNeeds(agent.AgentCopilot, Options{Getenv: getenv}); ok {
		t.Errorf("GitHub Copilot CLI's skill tool needs nothing, yet got a check")
	}
}
