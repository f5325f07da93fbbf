package hooks

import (
	"path/filepath"
	"strings"
	"testing"
)

// Gemini CLI reads our hook under AfterAgent with the timeout in
// milliseconds: an entry with a seconds-sized timeout is stale and is
// normalised, and a Stop entry of ours in the same file is not Gemini's.
func TestGeminiHookIsAfterAgentInMilliseconds(t *testing.T) {
	h := testHook.For(Gemini)
	if h.Event != EventAfterAgent || h.Timeout != 30 || !h.Millis {
		t.Fatalf("For(Gemini) = %+v", h)
	}
	if c := testHook.For(Codex); c.Event != EventStop || c.Millis {
		t.Fatalf("For(Codex) = %+v", c)
	}
	path := filepath.Join(t.TempDir(), ".gemini", "settings.json")
	writeFile(t, path, `{"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "\"/opt/sa/story-automator\" stop-hook", "timeout": 30}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "\"/opt/sa/story-automator\" stop-hook", "timeout": 30}]}]}}`, 0o600)
	loc := Location{Provider: Gemini, Scope: ScopeProject, Path: path}
	st := Inspect(loc, h, func(string) string { return "" })
	if !st.Installed || !st.Stale || st.Duplicated || st.Event != EventAfterAgent || st.Entries[0].Timeout != 0 {
		t.Fatalf("status %+v, want one stale AfterAgent entry with a 0 s timeout", st)
	}
	res, err := Install(path, h, Options{Now: fixedNow})
	if err != nil || !res.Changed {
		t.Fatalf("install: %+v %v", res, err)
	}
	got := readFile(t, path)
	if !strings.Contains(got, `"timeout": 30000`) || strings.Count(got, "stop-hook") != 2 {
		t.Fatalf("after install:\n%s", got)
	}
	if st := Inspect(loc, h, func(string) string { return "" }); st.Stale || st.Entries[0].Timeout != 30 {
		t.Fatalf("after install: %+v", st)
	}
}

func TestLocateGemini(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		scope Scope
		cli   string
		want  string
	}{
		{ScopeProject, "", "/p/.gemini/settings.json"},
		{ScopeUser, "", "/home/u/.gemini/settings.json"},
		{ScopeUser, "/g", "/g/.gemini/settings.json"},
	} {
		env["GEMINI_CLI_HOME"] = c.cli
		loc, err := Locate(Gemini, c.scope, "/p", getenv)
		if err != nil || loc.Path != c.want {
			t.Errorf("%s (GEMINI_CLI_HOME=%q): %q %v, want %s", c.scope, c.cli, loc.Path, err, c.want)
		}
	}
	if _, err := Locate(Gemini, ScopeLocal, "/p", getenv); err == nil {
		t.Error("Gemini has a local scope")
	}
}

// Gemini CLI's hooksConfig can turn every hook, or ours, off.
func TestGeminiStatusSaysWhenHooksAreOff(t *testing.T) {
	h := testHook.For(Gemini)
	entry := `"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "\"/opt/sa/story-automator\" stop-hook", "timeout": 30000}]}]}`
	for _, c := range []struct{ config, want string }{
		{`{` + entry + `}`, ""},
		{`{"hooksConfig": {"enabled": true}, ` + entry + `}`, ""},
		{`{"hooksConfig": {"enabled": false}, ` + entry + `}`, "hooksConfig.enabled is false"},
		{`{"hooksConfig": {"disabled": ["\"/opt/sa/story-automator\" stop-hook"]}, ` + entry + `}`, "hooksConfig.disabled lists this hook"},
		{`{"hooksConfig": {"disabled": ["other"]}, ` + entry + `}`, ""},
	} {
		path := filepath.Join(t.TempDir(), "settings.json")
		writeFile(t, path, c.config, 0o600)
		st := Inspect(Location{Provider: Gemini, Scope: ScopeUser, Path: path}, h, func(string) string { return "" })
		if !st.Installed || (c.want == "") != (st.Off == "") || !strings.Contains(st.Off, c.want) {
			t.Errorf("%s: off %q, want %q", c.config, st.Off, c.want)
		}
	}
}
