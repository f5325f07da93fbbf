package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// statusOf finds the report for one provider and scope in `hooks status` output.
func statusOf(t *testing.T, res map[string]any, provider, scope string) map[string]any {
	t.Helper()
	list, _ := res["hooks"].([]any)
	for _, item := range list {
		m := item.(map[string]any)
		if m["provider"] == provider && m["scope"] == scope {
			return m
		}
	}
	t.Fatalf("no status for %s/%s in %v", provider, scope, res)
	return nil
}

func TestHooksStatusReportsEveryScope(t *testing.T) {
	f := newHooksFixture(t)
	if _, code := f.run(t, "hooks", "install"); code != 0 {
		t.Fatal("install failed")
	}
	// A stale entry (a binary that moved) twice in the user settings.
	userFile := filepath.Join(f.home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(userFile), 0o700); err != nil {
		t.Fatal(err)
	}
	stale := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/moved/story-automator stop-hook", "timeout": 30}]},
		{"hooks": [{"type": "command", "command": "/moved/story-automator stop-hook", "timeout": 30}]}]}}`
	if err := os.WriteFile(userFile, []byte(stale), 0o600); err != nil {
		t.Fatal(err)
	}
	f.write(t, ".codex/hooks.json", `{"hooks": `)

	res, code := f.run(t, "hooks", "status")
	if code != 0 || res["ok"] != true || res["installed"] != true || res["command"] != f.command() {
		t.Fatalf("exit %d, %v", code, res)
	}
	if n := len(res["hooks"].([]any)); n != 9 {
		t.Fatalf("%d reports, want 9 (claude project/local/user, codex, copilot and gemini project/user)", n)
	}
	project := statusOf(t, res, "claude", "project")
	if project["installed"] != true || project["command"] != f.command() || project["binaryExists"] != true ||
		project["stale"] != false || project["duplicated"] != false ||
		project["file"] != filepath.Join(f.root, ".claude", "settings.json") {
		t.Errorf("claude/project: %v", project)
	}
	local := statusOf(t, res, "claude", "local")
	if local["exists"] != false || local["installed"] != false {
		t.Errorf("claude/local: %v", local)
	}
	user := statusOf(t, res, "claude", "user")
	if user["installed"] != true || user["stale"] != true || user["duplicated"] != true || user["binaryExists"] != false {
		t.Errorf("claude/user: %v", user)
	}
	codex := statusOf(t, res, "codex", "project")
	if codex["error"] != "settings_invalid_json" || codex["installed"] != false {
		t.Errorf("codex/project: %v", codex)
	}
	if codexUser := statusOf(t, res, "codex", "user"); codexUser["file"] != filepath.Join(f.home, ".codex", "hooks.json") {
		t.Errorf("codex/user: %v", codexUser)
	}
	if g := statusOf(t, res, "gemini", "user"); g["file"] != filepath.Join(f.home, ".gemini", "settings.json") || g["event"] != "AfterAgent" || g["installed"] != false {
		t.Errorf("gemini/user: %v", g)
	}
	if c := statusOf(t, res, "copilot", "project"); c["file"] != filepath.Join(f.root, ".github", "hooks", "story-automator.json") || c["event"] != "agentStop" {
		t.Errorf("copilot/project: %v", c)
	}
	if c := statusOf(t, res, "copilot", "user"); c["file"] != filepath.Join(f.home, ".copilot", "settings.json") || c["installed"] != false {
		t.Errorf("copilot/user: %v", c)
	}
}

func TestHooksStatusWithoutHome(t *testing.T) {
	f := newHooksFixture(t)
	delete(f.env, "HOME")
	res, code := f.run(t, "hooks", "status")
	if code != 0 {
		t.Fatalf("exit %d, %v", code, res)
	}
	if user := statusOf(t, res, "claude", "user"); user["error"] != "home_unknown" {
		t.Errorf("claude/user without HOME: %v", user)
	}
}

func TestHooksInstallWithoutBinaryPath(t *testing.T) {
	f := newHooksFixture(t)
	f.exeErr = errors.New("no /proc")
	for _, args := range [][]string{{"hooks", "install"}, {"hooks", "status"}} {
		res, code := f.run(t, args...)
		if code != 1 || res["error"] != "binary_path" {
			t.Fatalf("%v: exit %d, %v", args, code, res)
		}
	}
	if listDir(t, f.root) != "" {
		t.Fatal("install without a binary path wrote something")
	}
}
