package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/sessionstate"
)

// Real captures of each first-run dialog of the pinned Claude Code, named
// claude-<version>-<kind>.txt: each is recognised as its kind, and no
// finished or working turn screen is taken for a dialog.
func TestClaudeDialogsOnRealScreens(t *testing.T) {
	p, _ := agent.LookupProfile(agent.AgentClaude)
	files, _ := filepath.Glob("testdata/dialogs/claude-*.txt")
	if len(files) < 4 {
		t.Fatalf("dialog fixtures: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(filepath.Base(f)[strings.LastIndex(filepath.Base(f), "-")+1:], ".txt")
		d, ok := agent.MatchDialog(p.Dialogs, string(b))
		if !ok || d.Kind != want || d.Action == "" {
			t.Errorf("%s: dialog %+v %v, want %s with an action", filepath.Base(f), d, ok, want)
		}
		if ClaudeTurnDone(string(b)) {
			t.Errorf("%s: a dialog taken for a finished turn", filepath.Base(f))
		}
	}
	turns, _ := filepath.Glob("testdata/claude/*.txt")
	for _, f := range turns {
		b, _ := os.ReadFile(f)
		if d, ok := agent.MatchDialog(p.Dialogs, string(b)); ok {
			t.Errorf("%s: turn screen taken for dialog %s", filepath.Base(f), d.Kind)
		}
	}
}

func TestADialogOnScreenEndsTheWaitStuck(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	m := NewMachine(DefaultOptions(), now)
	st := &sessionstate.State{Agent: agent.AgentClaude, Lifecycle: sessionstate.LifecycleStarted, PanePid: 1, AgentPid: 2}
	f := Facts{Now: now, State: st, OutputSize: 100, ScreenHeuristic: true}
	m.Next(f)
	f.Now = now.Add(DefaultOptions().IdleDebounce)
	if a := m.Next(f); a.Kind != ActProbeScreen {
		t.Fatalf("after the idle debounce: %+v, want a screen probe", a)
	}
	d := agent.Dialog{Kind: agent.DialogTrustFolder, Action: "trust it"}
	m.ScreenProbed(ScreenVerdict{Dialog: &d}, 100)
	a := m.Next(f)
	if a.Kind != ActFinish || a.State != Stuck || a.Reason != ReasonDialog || a.Dialog == nil || a.Dialog.Kind != agent.DialogTrustFolder {
		t.Fatalf("action = %+v, want stuck at the trust dialog", a)
	}
}

// Gemini's exit 55 in an untrusted folder is its trust dialog, not a crash.
func TestAnExitTheProfileKnowsAsADialogIsStuckNotCrashed(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	code := 55
	st := &sessionstate.State{Agent: agent.AgentGemini, Lifecycle: sessionstate.LifecycleExited, ExitCode: &code}
	a := NewMachine(DefaultOptions(), now).Next(Facts{Now: now, State: st})
	if a.State != Stuck || a.Reason != ReasonDialog || a.Dialog == nil || a.Dialog.Kind != agent.DialogTrustFolder {
		t.Fatalf("gemini exit 55: %+v", a)
	}
	other := 55
	st = &sessionstate.State{Agent: agent.AgentCodex, Lifecycle: sessionstate.LifecycleExited, ExitCode: &other}
	if a := NewMachine(DefaultOptions(), now).Next(Facts{Now: now, State: st}); a.State != Crashed {
		t.Fatalf("codex exit 55: %+v, want crashed", a)
	}
}

// Real output of the pinned Claude Code started as root without IS_SANDBOX:
// it exits 1 at once. That is a refusal the user must settle (stuck at the
// run_as_root dialog, with the action), not a crash to retry; another
// non-zero exit with other output stays a crash.
func TestAClaudeThatRefusesRootIsStuckNotCrashed(t *testing.T) {
	out := readFixture(t, "testdata/refusals/claude-2.1.328-run_as_root.log")
	for _, tc := range []struct {
		output string
		want   FinalState
	}{{out, Stuck}, {"Error: something else broke\r\n", Crashed}} {
		tm := &fakeTmux{}
		d := fakeDeps(t, tm, true)
		writeSession(t, d, "sa-r", func(st *sessionstate.State) {
			code := 1
			st.Agent, st.Lifecycle, st.ExitCode = agent.AgentClaude, sessionstate.LifecycleExited, &code
		}, tc.output)
		r := Watch(context.Background(), "sa-r", noneVerifier{}, quickOptions(), d)
		if r.FinalState != tc.want {
			t.Fatalf("%q: %+v, want %s", tc.output, r, tc.want)
		}
		if tc.want == Stuck && (r.Reason != ReasonDialog || r.Dialog != agent.DialogRunAsRoot || !strings.Contains(r.Action, "IS_SANDBOX=1")) {
			t.Fatalf("refusal: %+v", r)
		}
	}
	// A live screen with the same words is not the refusal.
	p, _ := agent.LookupProfile(agent.AgentClaude)
	if d, ok := agent.MatchDialog(p.Dialogs, out); ok {
		t.Fatalf("live screen matched the exit-only dialog %s", d.Kind)
	}
}

// Real output of the pinned Gemini CLI with no sign-in: -p exits 41 at once.
// That is a refusal the user must settle, not a crash to retry.
func TestAGeminiWithoutAuthIsStuckNotCrashed(t *testing.T) {
	for _, f := range []string{"gemini-0.61.0-auth_method.log", "gemini-0.61.0-auth_method-invalid.log"} {
		out := readFixture(t, "testdata/refusals/"+f)
		tm := &fakeTmux{}
		d := fakeDeps(t, tm, true)
		writeSession(t, d, "sa-g", func(st *sessionstate.State) {
			code := 41
			st.Agent, st.Lifecycle, st.ExitCode = agent.AgentGemini, sessionstate.LifecycleExited, &code
		}, out)
		r := Watch(context.Background(), "sa-g", noneVerifier{}, quickOptions(), d)
		if r.FinalState != Stuck || r.Reason != ReasonDialog || r.Dialog != agent.DialogAuthMethod || !strings.Contains(r.Action, "GEMINI_API_KEY") {
			t.Fatalf("%s: %+v", f, r)
		}
	}
}

// Real output of the pinned GitHub Copilot CLI that cannot sign in: with no
// GitHub token, offline with no provider, or with a provider but no model,
// -p exits 1 at once. A refusal the user must settle, not a crash to retry.
func TestACopilotWithoutAuthIsStuckNotCrashed(t *testing.T) {
	for f, want := range map[string]string{"copilot-1.0.102-auth_method.log": "COPILOT_GITHUB_TOKEN",
		"copilot-1.0.102-auth_method-offline.log": "COPILOT_PROVIDER_BASE_URL", "copilot-1.0.102-auth_method-no_model.log": "COPILOT_MODEL"} {
		out := readFixture(t, "testdata/refusals/"+f)
		d := fakeDeps(t, &fakeTmux{}, true)
		writeSession(t, d, "sa-c", func(st *sessionstate.State) {
			code := 1
			st.Agent, st.Lifecycle, st.ExitCode = agent.AgentCopilot, sessionstate.LifecycleExited, &code
		}, out)
		r := Watch(context.Background(), "sa-c", noneVerifier{}, quickOptions(), d)
		if r.FinalState != Stuck || r.Reason != ReasonDialog || r.Dialog != agent.DialogAuthMethod || !strings.Contains(r.Action, want) {
			t.Fatalf("%s: %+v", f, r)
		}
	}
}
