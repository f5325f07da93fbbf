package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// afterAgentHooks decodes a Gemini settings file's hooks.AfterAgent entries.
func afterAgentHooks(t *testing.T, path string) []map[string]any {
	t.Helper()
	var doc struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(mustRead(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Hooks["Stop"]; ok {
		t.Errorf("a Stop event was written to Gemini's settings")
	}
	var out []map[string]any
	for _, g := range doc.Hooks["AfterAgent"] {
		out = append(out, g.Hooks...)
	}
	return out
}

// Gemini CLI's settings get our stop-hook as an AfterAgent hook with its
// timeout in milliseconds; the user's own hooks and settings stay, a second
// install changes nothing, status sees it, and uninstall restores the bytes.
func TestHooksGeminiInstallStatusUninstallRoundTrip(t *testing.T) {
	f := newHooksFixture(t)
	original := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "hooks": {
    "AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5000}]}],
    "BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit"}]}]
  }
}
`
	path := f.write(t, ".gemini/settings.json", original)
	res, code := f.run(t, "hooks", "install", "--provider", "gemini")
	if code != 0 || res["changed"] != true || res["event"] != "AfterAgent" || res["file"] != path || res["notice"] == nil {
		t.Fatalf("install: exit %d, %v", code, res)
	}
	hooks := afterAgentHooks(t, path)
	if len(hooks) != 2 || hooks[0]["command"] != "notify-send done" {
		t.Fatalf("AfterAgent hooks %v, want the user's then ours", hooks)
	}
	if ours := hooks[1]; ours["type"] != "command" || ours["command"] != f.command() || ours["timeout"] != 30000.0 {
		t.Fatalf("our AfterAgent entry %v, want a command with a 30000 ms timeout", ours)
	}
	if res, code = f.run(t, "hooks", "install", "--provider", "gemini"); code != 0 || res["changed"] != false {
		t.Fatalf("second install: exit %d, %v", code, res)
	}
	res, code = f.run(t, "hooks", "status")
	g := statusOf(t, res, "gemini", "project")
	if code != 0 || g["installed"] != true || g["event"] != "AfterAgent" || g["stale"] != false || g["binaryExists"] != true {
		t.Fatalf("status gemini/project: %v", g)
	}
	if entries := g["entries"].([]any); entries[0].(map[string]any)["timeout"] != 30.0 {
		t.Errorf("status reports the timeout %v, want 30 (seconds)", entries[0])
	}
	if c := statusOf(t, res, "claude", "project"); c["installed"] != false {
		t.Errorf("claude/project: %v", c)
	}
	res, code = f.run(t, "hooks", "uninstall", "--provider", "gemini")
	if code != 0 || res["restored"] != true {
		t.Fatalf("uninstall: exit %d, %v", code, res)
	}
	if got := mustRead(t, path); got != original {
		t.Fatalf("after uninstall:\n%s\nwant\n%s", got, original)
	}
}

// Gemini CLI strips comments from its settings; our editor keeps every byte
// it does not own and cannot keep comments yet, so it leaves such a file alone.
func TestHooksGeminiRefusesASettingsFileWithComments(t *testing.T) {
	f := newHooksFixture(t)
	original := "{\n  // mine\n  \"general\": {}\n}\n"
	path := f.write(t, ".gemini/settings.json", original)
	res, code := f.run(t, "hooks", "install", "--provider", "gemini")
	if code != 1 || res["error"] != "settings_invalid_json" {
		t.Fatalf("install: exit %d, %v", code, res)
	}
	if got := mustRead(t, path); got != original {
		t.Fatalf("the file changed: %q", got)
	}
}

// The user scope is the .gemini directory under $GEMINI_CLI_HOME, else $HOME.
func TestHooksGeminiUserScope(t *testing.T) {
	f := newHooksFixture(t)
	for _, c := range []struct{ cliHome, file string }{
		{"", filepath.Join(f.home, ".gemini", "settings.json")},
		{filepath.Join(f.home, "alt"), filepath.Join(f.home, "alt", ".gemini", "settings.json")},
	} {
		f.env["GEMINI_CLI_HOME"] = c.cliHome
		res, code := f.run(t, "hooks", "install", "--provider", "gemini", "--scope", "user")
		if code != 0 || res["file"] != c.file || res["notice"] != nil {
			t.Fatalf("GEMINI_CLI_HOME=%q: exit %d, %v", c.cliHome, code, res)
		}
		if hooks := afterAgentHooks(t, c.file); len(hooks) != 1 || hooks[0]["command"] != f.command() {
			t.Fatalf("%s: AfterAgent hooks %v", c.file, hooks)
		}
	}
}
