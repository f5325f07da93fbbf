package hooks

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// --provider's default and help come from the table: the default agent,
// and each provider with the event its hook is under when that is not Stop.
func TestProviderDefaultAndUsageComeFromTheTable(t *testing.T) {
	if got := DefaultProvider(); got != string(Claude) {
		t.Errorf("DefaultProvider = %q", got)
	}
	if got := ProviderUsage(); got != "claude, codex, copilot (its agentStop hook) or gemini (its AfterAgent hook)" {
		t.Errorf("ProviderUsage = %q", got)
	}
}

// An agent whose profile names no settings file takes no hook: no scopes,
// no file, and a usage error from Apply.
func TestAnAgentWithoutHookFilesIsNoProvider(t *testing.T) {
	if s := Scopes("sim"); len(s) != 0 {
		t.Errorf("sim scopes %v", s)
	}
	if _, err := Locate("sim", ScopeProject, "/p", func(string) string { return "/h" }); !errors.Is(err, ErrUnsupportedScope) {
		t.Errorf("Locate(sim): %v", err)
	}
	if h := testHook.For("sim"); h.Event != EventStop || h.Millis {
		t.Errorf("For(sim) = %+v", h)
	}
}

// Only a provider whose profile names a trust step has its trust inspected,
// in the config.toml of its state directory.
func TestInspectTrustOnlyForATrustStep(t *testing.T) {
	home := t.TempDir()
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	lister := &fakeCodex{err: ErrProgramNotFound}
	if _, ok := InspectTrust(context.Background(), Location{Provider: Claude, Scope: ScopeUser}, testHook, getenv, lister, "/p"); ok || lister.calls != 0 {
		t.Errorf("claude has no trust step (asked %d times)", lister.calls)
	}
	st, ok := InspectTrust(context.Background(), Location{Provider: Codex, Scope: ScopeUser}, testHook, getenv, lister, "/p")
	if !ok || st.ConfigFile != filepath.Join(home, ".codex", "config.toml") || st.Trusted != nil {
		t.Errorf("codex trust: %+v %v", st, ok)
	}
	if _, ok := InspectTrust(context.Background(), Location{Provider: Codex, Scope: ScopeUser}, testHook, func(string) string { return "" }, lister, "/p"); ok {
		t.Error("a config.toml without HOME or CODEX_HOME was inspected")
	}
}

// The CLI asked about trust is the provider's program; without it on PATH
// the error names it.
func TestListerAsksTheProvidersProgram(t *testing.T) {
	if l, ok := Lister(Codex, nil).(CodexAppServer); !ok || l.Program != "codex" {
		t.Errorf("Lister(codex) = %+v", l)
	}
	t.Setenv("PATH", t.TempDir())
	_, err := CodexAppServer{Program: "codex"}.ListHooks(context.Background(), "/p")
	if !errors.Is(err, ErrProgramNotFound) || err.Error() != "codex is not on PATH" {
		t.Errorf("err = %v", err)
	}
}
