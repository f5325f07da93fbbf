package notify

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/workflows"
)

type recordReporter struct{ kinds []string }

func (r *recordReporter) Report(ev orchestrator.Event) { r.kinds = append(r.kinds, ev.Kind) }

func newRunReporter(n workflows.Notify) (*RunReporter, *fakeSink, *recordReporter) {
	sink, next := &fakeSink{name: "fake"}, &recordReporter{}
	return &RunReporter{Next: next, Sender: &Sender{Sinks: []Sink{sink}}, Policy: n, Project: testRun.Project,
		Now: func() time.Time { return testNow }}, sink, next
}

func TestTheRunsEventsBecomeNotifications(t *testing.T) {
	r, sink, next := newRunReporter(workflows.Notify{})
	events := []orchestrator.Event{
		{Kind: orchestrator.EventRunStarted, Message: testRun.ID},
		{Kind: orchestrator.EventStepStarted, Unit: "1.1", Step: "dev"},
		{Kind: orchestrator.EventLimitWait, Unit: "1.1", Step: "dev", Agent: "claude", Reason: "usage_limit", ResetsAt: "2026-01-02T18:00:00Z"},
		{Kind: orchestrator.EventLimitResumed, Unit: "1.1", Step: "dev", Agent: "claude"},
		{Kind: orchestrator.EventEscalated, Unit: "1.2", Step: "create", Reason: "merge conflict", Code: "commit_conflict"},
		{Kind: orchestrator.EventBudgetExceeded, Unit: "1.3", Step: "dev", Reason: "spent $2", Message: "raise it"},
		{Kind: orchestrator.EventParked, Unit: "1.5", Step: "dev", Reason: "intent gap", Message: "answer the spec's questions", Code: "build_auto_blocked"},
		{Kind: orchestrator.EventEscalated, Unit: "1.4", Step: "dev", Reason: "the claude agent waits at its trust dialog", Message: "answer it", Code: tmuxsteps.CodeAgentDialog},
	}
	for _, ev := range events {
		r.Report(ev)
	}
	r.Sender.Close(context.Background())
	var kinds []string
	for _, ev := range sink.events() {
		kinds = append(kinds, ev.Kind)
		if ev.RunID != testRun.ID || ev.Project != testRun.Project {
			t.Errorf("%s lost its run: %+v", ev.Kind, ev)
		}
	}
	if want := []string{KindLimitWait, KindLimitResumed, KindBudgetPaused, KindParked, KindDialog}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("notified %v, want %v", kinds, want)
	}
	if got := sink.events()[0]; got.ResetsAt != "2026-01-02T18:00:00Z" || got.Agent != "claude" || got.Story != "1.1" {
		t.Fatalf("limit_wait %+v", got)
	}
	if p := sink.events()[3]; p.Story != "1.5" || p.Action != "answer the spec's questions" || p.Reason != "intent gap" || !strings.HasSuffix(p.Command, "run --resume") {
		t.Fatalf("parked %+v", p)
	}
	if d := sink.events()[4]; d.Story != "1.4" || d.Action != "answer it" {
		t.Fatalf("dialog %+v", d)
	}
	if len(next.kinds) != len(events) {
		t.Fatalf("the run's own reporter got %v", next.kinds)
	}
}

func result(outcome orchestrator.Outcome, esc *orchestrator.Escalation) *orchestrator.Result {
	st := &orchestrator.State{RunID: testRun.ID, Escalation: esc, Units: []*orchestrator.Unit{
		{Key: "1-1", Kind: orchestrator.KindStory, Status: orchestrator.StatusDone},
		{Key: "1-2", Kind: orchestrator.KindStory, Status: orchestrator.StatusDone}}}
	return &orchestrator.Result{Outcome: outcome, State: st}
}

// withParked parks the run's story 1-2.
func withParked(res *orchestrator.Result) *orchestrator.Result {
	u := res.State.Units[1]
	u.Dotted, u.Status = "1.2", orchestrator.StatusParked
	return res
}

// A run that ends with parked stories says which, and that the rest is done.
func TestARunDoneWithParkedStoriesNamesThem(t *testing.T) {
	r, sink, _ := newRunReporter(workflows.Notify{})
	r.End(withParked(result(orchestrator.OutcomeDoneWithParked, nil)), orchestrator.ErrDoneWithParked)
	r.Sender.Close(context.Background())
	got := sink.events()
	if len(got) != 1 || !strings.Contains(got[0].Message, "1 done; parked: 1.2") || !strings.Contains(got[0].Title, "1 story parked") {
		t.Fatalf("sent %+v", got)
	}
}

func TestTheRunsEndBecomesDoneOrEscalatedOnce(t *testing.T) {
	dialog := &orchestrator.Escalation{Unit: "1.2", Step: "dev", Reason: "waits at a dialog", Code: tmuxsteps.CodeAgentDialog}
	crash := &orchestrator.Escalation{Unit: "1.2", Step: "dev", Reason: "dev story of 1.2: crashed 3 times", Action: "look at the log"}
	for name, c := range map[string]struct {
		before []orchestrator.Event
		res    *orchestrator.Result
		err    error
		want   []string
	}{
		"done":        {res: result(orchestrator.OutcomeDone, nil), want: []string{KindDone}},
		"parked left": {res: withParked(result(orchestrator.OutcomeDoneWithParked, nil)), err: orchestrator.ErrDoneWithParked, want: []string{KindDone}},
		"escalated":   {res: result(orchestrator.OutcomeEscalated, crash), err: orchestrator.ErrEscalated, want: []string{KindEscalated}},
		"dialog once": {before: []orchestrator.Event{{Kind: orchestrator.EventEscalated, Unit: "1.2", Step: "dev", Code: tmuxsteps.CodeAgentDialog}}, res: result(orchestrator.OutcomeEscalated, dialog), err: orchestrator.ErrEscalated, want: []string{KindDialog}},
		"interrupted": {res: result(orchestrator.OutcomeInterrupted, nil), err: orchestrator.ErrInterrupted},
		"budget":      {res: result(orchestrator.OutcomeBudgetExceeded, &orchestrator.Escalation{Code: orchestrator.CodeBudgetExceeded}), err: orchestrator.ErrBudgetExceeded},
		"failed":      {res: result("", nil), err: errors.New("save run state: disk full"), want: []string{KindEscalated}},
		"not started": {err: orchestrator.ErrRunActive},
	} {
		r, sink, _ := newRunReporter(workflows.Notify{})
		for _, ev := range c.before {
			r.Report(ev)
		}
		r.End(c.res, c.err)
		r.Sender.Close(context.Background())
		var kinds []string
		for _, ev := range sink.events() {
			kinds = append(kinds, ev.Kind)
		}
		if !reflect.DeepEqual(kinds, c.want) {
			t.Errorf("%s: notified %v, want %v", name, kinds, c.want)
		}
		if c.want != nil && c.want[0] == KindDone && sink.events()[0].Message[:len("Run "+testRun.ID)] != "Run "+testRun.ID {
			t.Errorf("done message %q", sink.events()[0].Message)
		}
	}
}

func TestOnlyTheKindsThePolicyNamesAreSent(t *testing.T) {
	r, sink, _ := newRunReporter(workflows.Notify{Events: []string{KindDone}})
	r.Report(orchestrator.Event{Kind: orchestrator.EventLimitWait, Agent: "codex"})
	r.End(result(orchestrator.OutcomeDone, nil), nil)
	r.Sender.Close(context.Background())
	if got := sink.events(); len(got) != 1 || got[0].Kind != KindDone {
		t.Fatalf("sent %+v", got)
	}
}

// The policy's event names and the notifier's kinds are the same list.
func TestThePolicysEventKindsAreTheNotifiersKinds(t *testing.T) {
	kinds := []string{KindDone, KindEscalated, KindParked, KindDialog, KindBudgetPaused, KindLimitWait, KindLimitResumed}
	if got := workflows.NotifyEvents(); !reflect.DeepEqual(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(kinds))) {
		t.Fatalf("workflows.NotifyEvents %v, notify kinds %v", got, kinds)
	}
	if codeAgentDialog != tmuxsteps.CodeAgentDialog {
		t.Fatalf("the dialog code is %q here, %q in tmuxsteps", codeAgentDialog, tmuxsteps.CodeAgentDialog)
	}
}
