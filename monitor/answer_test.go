package monitor

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/sessionstate"
)

func readFixture(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// trustDialogSession is a Claude child at the real trust dialog; accept
// lists the dialogs the user let the tool answer for it.
func trustDialogSession(t *testing.T, accept []string) (*fakeTmux, Deps) {
	t.Helper()
	tm := &fakeTmux{exists: true, screen: readFixture(t, "testdata/dialogs/claude-2.1.328-trust_folder.txt")}
	d := fakeDeps(t, tm, false)
	d.SelectionWait = 200 * time.Millisecond
	writeSession(t, d, "sa-t", func(st *sessionstate.State) {
		st.Agent, st.Lifecycle, st.PanePid, st.AgentPid = agent.AgentClaude, sessionstate.LifecycleStarted, os.Getpid(), os.Getpid()
		st.AcceptDialogs = accept
	}, "the dialog")
	return tm, d
}

func appendOutput(t *testing.T, d Deps, name, s string) {
	f, err := os.OpenFile(sessionstate.OutputPath(d.StateDir, name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// With --trust-project the trust dialog is answered as the user would
// (select Yes, see it selected, confirm) and the turn that follows completes.
func TestWatchAnswersTheTrustDialogTheUserAllowed(t *testing.T) {
	tm, d := trustDialogSession(t, []string{agent.DialogTrustFolder})
	done := readFixture(t, "testdata/claude/done-real-2.1.328-baked-100cols.txt")
	tm.onKey = func(f *fakeTmux, key string) {
		switch key {
		case "Down":
			f.screen = strings.Replace(strings.Replace(f.screen, "❯ No, exit", "  No, exit", 1),
				"  Yes, I trust this folder", "❯ Yes, I trust this folder", 1)
		case "Enter":
			f.screen = done
			appendOutput(t, d, "sa-t", "the turn")
		}
	}
	r := Watch(context.Background(), "sa-t", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Completed || r.Reason != SignalScreen || !slices.Equal(tm.keys, []string{"Down", "Enter"}) {
		t.Fatalf("%+v, keys %v", r, tm.keys)
	}
	st, err := sessionstate.Read(d.StateDir, "sa-t")
	if err != nil || !slices.Equal(st.AnsweredDialogs, []string{agent.DialogTrustFolder}) {
		t.Fatalf("answered = %+v %v", st, err)
	}
}

// Without the user's leave no key is ever sent: the child is stuck at the dialog.
func TestWatchNeverAnswersADialogUnasked(t *testing.T) {
	tm, d := trustDialogSession(t, nil)
	r := Watch(context.Background(), "sa-t", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Stuck || r.Dialog != agent.DialogTrustFolder || len(tm.keys) != 0 {
		t.Fatalf("%+v, keys %v", r, tm.keys)
	}
}

// A dialog that does not show the expected selection is never confirmed.
func TestWatchLeavesADialogThatDoesNotShowTheSelection(t *testing.T) {
	tm, d := trustDialogSession(t, []string{agent.DialogTrustFolder})
	r := Watch(context.Background(), "sa-t", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Stuck || r.Dialog != agent.DialogTrustFolder || !slices.Equal(tm.keys, []string{"Down"}) {
		t.Fatalf("%+v, keys %v", r, tm.keys)
	}
}

// A dialog still there after its answer (or seen by a later monitor) is
// answered once only: the child is stuck at it.
func TestWatchAnswersADialogOnce(t *testing.T) {
	tm, d := trustDialogSession(t, []string{agent.DialogTrustFolder})
	tm.onKey = func(f *fakeTmux, key string) {
		if key == "Down" {
			f.screen = strings.Replace(f.screen, "  Yes, I trust this folder", "❯ Yes, I trust this folder", 1)
		}
	}
	r := Watch(context.Background(), "sa-t", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Stuck || r.Dialog != agent.DialogTrustFolder || !slices.Equal(tm.keys, []string{"Down", "Enter"}) {
		t.Fatalf("%+v, keys %v", r, tm.keys)
	}
	tm.keys = nil
	r = Watch(context.Background(), "sa-t", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Stuck || len(tm.keys) != 0 {
		t.Fatalf("second monitor: %+v, keys %v", r, tm.keys)
	}
}

// The bypass warning and an API key are never answered, whatever a session asks.
func TestOnlyTrustCanBeAnswered(t *testing.T) {
	for _, name := range agent.AgentNames() {
		p, _ := agent.LookupProfile(name)
		for _, dl := range p.Dialogs {
			if dl.Accept != nil && !agent.AcceptableKind(dl.Kind) {
				t.Errorf("%s: dialog %s has an answer", name, dl.Kind)
			}
		}
	}
	for _, k := range []string{agent.DialogBypassPermissions, agent.DialogAPIKey, agent.DialogOnboarding, agent.DialogUnknownPrompt} {
		if agent.AcceptableKind(k) {
			t.Errorf("%s is acceptable", k)
		}
	}
	tm, d := trustDialogSession(t, []string{agent.DialogBypassPermissions, agent.DialogAPIKey})
	tm.screen = readFixture(t, "testdata/dialogs/claude-2.1.328-bypass_permissions.txt")
	r := Watch(context.Background(), "sa-t", noneVerifier{}, quickOptions(), d)
	if r.FinalState != Stuck || r.Dialog != agent.DialogBypassPermissions || len(tm.keys) != 0 {
		t.Fatalf("%+v, keys %v", r, tm.keys)
	}
}
