package dashboard

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/bmad"
	"github.com/story-automator/story-automator/resolve"
)

// calls records what the resolve keys asked of their fakes.
type calls struct{ got []string }

func (c *calls) controls() Controls {
	return Controls{
		rearm: func(_ context.Context, o resolve.Options) (*resolve.Result, error) {
			what := "rearm " + o.Story
			if o.Replan {
				what += " replan"
			}
			c.got = append(c.got, what)
			return &resolve.Result{Story: o.Story}, nil
		},
		resolveOn: func(story, socket string) tea.Cmd {
			c.got = append(c.got, "resolve "+story+" on "+socket)
			return func() tea.Msg { return noteMsg{text: "resolved"} }
		},
		startResume: func(stateFile, socket string) noteMsg {
			c.got = append(c.got, "resume "+stateFile+" on "+socket)
			return noteMsg{text: "resumed"}
		},
	}
}

// stoppedAt is the fixture with 1.2 stopped: status, and the run's
// escalation of it with code.
func stoppedAt(status, code string) Snapshot {
	st := fixtureState(4)
	st.Status = orchestrator.RunPaused
	st.Units[1].Status, st.Units[1].Steps[1].Status = status, status
	st.Escalation = &orchestrator.Escalation{Unit: "1.2", Step: "dev", Reason: "why", Action: "what", Code: code}
	return snapshotOf(st)
}

// Each resolve key makes the call of its command on the selected story:
// v `resolve STORY`, c a resume at a checkpoint or a re-arm of a parked
// story, n a replan (re-arm to draft) and a resume; on a story with
// nothing to resolve, none is made.
func TestResolveKeysCallTheCommandsFunctions(t *testing.T) {
	const state = "/p/.story-automator/runs/run-20261122-120000-abcd.md"
	cases := []struct {
		name string
		snap Snapshot
		key  string
		want string
	}{
		{"resolve an escalated story", stoppedAt(orchestrator.StatusEscalated, "build_auto_blocked"), "v", "resolve 1.2 on story-demo"},
		{"resolve a parked story", stoppedAt(orchestrator.StatusParked, "build_auto_blocked"), "v", "resolve 1.2 on story-demo"},
		{"approve a plan", stoppedAt(orchestrator.StatusEscalated, bmad.CodePlanReview), "c", "resume " + state + " on story-demo"},
		{"continue after a done checkpoint", stoppedAt(orchestrator.StatusEscalated, resolve.CodeDoneCheckpoint), "c", "resume " + state + " on story-demo"},
		{"confirm a parked story", stoppedAt(orchestrator.StatusParked, "merge_conflict"), "c", "rearm 1.2"},
		{"ask for a replan", stoppedAt(orchestrator.StatusEscalated, bmad.CodePlanReview), "n", "rearm 1.2 replan\nresume " + state + " on story-demo"},
		{"no replan without a plan checkpoint", stoppedAt(orchestrator.StatusEscalated, "build_auto_blocked"), "n", ""},
		{"no continue past an escalation", stoppedAt(orchestrator.StatusEscalated, "build_auto_blocked"), "c", ""},
		{"nothing to resolve on a running story", snapshotOf(fixtureState(4)), "v", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &calls{}
			m := New(fixedSource(), rec.controls(), true).WithSnapshot(c.snap, 100, 30)
			m, _ = press(t, m, "j")
			m, cmd := press(t, m, c.key)
			if cmd != nil {
				cmd()
			}
			if got := strings.Join(rec.got, "\n"); got != c.want {
				t.Fatalf("calls %q, want %q (note %q)", got, c.want, m.note.text)
			}
			if c.want == "" && (cmd != nil || m.note.text == "") {
				t.Fatalf("a key with nothing to do must say why and do nothing: note %q", m.note.text)
			}
		})
	}
}
