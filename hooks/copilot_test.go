package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Copilot CLI reads its hooks flat under agentStop, {"type": "command",
// "bash": CMD, "timeoutSec": N}, in ~/.copilot/settings.json ($COPILOT_HOME)
// and a project's .github/hooks/ files: install adds exactly one such entry
// beside the user's own, normalises an old one in place, and uninstall
// gives the file back byte for byte.
func TestCopilotHookIsAFlatAgentStopEntry(t *testing.T) {
	h := testHook.For(Copilot)
	if h.Event != "agentStop" || !h.Flat || h.Millis {
		t.Fatalf("For(Copilot) = %+v", h)
	}
	env := map[string]string{"HOME": "/home/u"}
	getenv := func(k string) string { return env[k] }
	if loc, err := Locate(Copilot, ScopeUser, "/p", getenv); err != nil || loc.Path != "/home/u/.copilot/settings.json" {
		t.Fatalf("user: %+v %v", loc, err)
	}
	env["COPILOT_HOME"] = "/c"
	if loc, err := Locate(Copilot, ScopeUser, "/p", getenv); err != nil || loc.Path != "/c/settings.json" {
		t.Fatalf("user with COPILOT_HOME: %+v %v", loc, err)
	}
	if loc, err := Locate(Copilot, ScopeProject, "/p", getenv); err != nil || loc.Path != "/p/.github/hooks/story-automator.json" {
		t.Fatalf("project: %+v %v", loc, err)
	}

	path := filepath.Join(t.TempDir(), "settings.json")
	before := `{"model": "gpt-5.4", "hooks": {"agentStop": [{"type": "command", "bash": "echo mine"}]}}` + "\n"
	writeFile(t, path, before, 0o600)
	res, err := Install(path, h, Options{Now: fixedNow})
	if err != nil || !res.Changed {
		t.Fatalf("install: %+v %v", res, err)
	}
	got := readFile(t, path)
	if !strings.Contains(got, `"bash": "echo mine"`) || !strings.Contains(got, `"bash": `+quoteJSON(h.Command)) ||
		!strings.Contains(got, `"timeoutSec": 30`) || strings.Contains(got, `"hooks": [`) || strings.Contains(got, `"command": "/`) {
		t.Fatalf("after install:\n%s", got)
	}
	loc := Location{Provider: Copilot, Scope: ScopeUser, Path: path}
	if st := Inspect(loc, h, getenv); !st.Installed || st.Stale || st.Duplicated || st.Entries[0].Timeout != 30 {
		t.Fatalf("status %+v", st)
	}
	if res, err := Install(path, h, Options{Now: fixedNow}); err != nil || res.Changed {
		t.Fatalf("a second install changed the file: %+v %v", res, err)
	}
	if _, err := Uninstall(path, h, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != before {
		t.Fatalf("after uninstall:\n%s\nwant:\n%s", b, before)
	}
}
