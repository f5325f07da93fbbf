package orchestrator

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// Park records the request and takes its paths out of the tree, as git
// keeps them on the ref and sets them back.
func (r *fakeRepo) Park(_ context.Context, req ParkRequest) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parked = append(r.parked, req)
	for _, p := range req.Paths {
		delete(r.tree, p)
	}
	return "parkedsha" + req.Story, nil
}

// Unpark brings the paths of the ref's park back into the tree.
func (r *fakeRepo) Unpark(_ context.Context, ref string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unparked = append(r.unparked, ref)
	for _, req := range r.parked {
		if req.Ref == ref {
			for _, p := range req.Paths {
				r.tree[p]++
			}
			return true, nil
		}
	}
	return false, nil
}

// parkHarness is four stories, 1-4 depending on 1-1, whose every step
// completes but 1-1's dev, which crashes (writing its file) while
// crash1 is set.
func parkHarness(t *testing.T) (*harness, *eventLog, *bool) {
	t.Helper()
	h := newHarness(t, "1-1", "1-2", "1-3", "1-4")
	h.project.set("1-4", func(s *StoryInfo) { s.DependsOn = []string{"1-1"} })
	crash1 := true
	h.steps.script = func(_ context.Context, req StepRequest) StepResult {
		if req.Story == "1-1" && req.Step == StepDev && crash1 {
			h.repo.touch("src/one.go")
			return StepResult{FinalState: FinalCrashed, Reason: "exit_code_1"}
		}
		return StepResult{FinalState: FinalCompleted}
	}
	ev := &eventLog{}
	return h, ev, &crash1
}

func (h *harness) runParking(ev *eventLog, resume bool) (*Result, error) {
	h.t.Helper()
	d := h.deps()
	d.Report = ev
	o := h.options()
	o.OnEscalation, o.Resume = OnEscalationPark, resume
	return Run(context.Background(), o, d)
}

// A story out of retries parks: its work is kept on its ref, the two
// stories that do not depend on it land, the one that does waits, and the
// run ends done_with_parked; --resume takes the parked story up again.
func TestAStoryOutOfRetriesParksAndTheOthersLand(t *testing.T) {
	h, ev, crash1 := parkHarness(t)
	res, err := h.runParking(ev, false)
	if !errors.Is(err, ErrDoneWithParked) || res.Outcome != OutcomeDoneWithParked {
		t.Fatalf("outcome %q, err %v; want done_with_parked", res.Outcome, err)
	}
	st := h.saved(res)
	for key, want := range map[string]string{"1-1": StatusParked, "1-2": StatusDone, "1-3": StatusDone, "1-4": StatusPending} {
		if got := st.Unit(key).Status; got != want {
			t.Fatalf("%s is %s, want %s", key, got, want)
		}
	}
	p := st.Unit("1-1").Parked
	ref := ParkRef(st.RunID, "1-1")
	if p == nil || p.Code != CodeRetriesExhausted || p.Step != StepDev || p.Ref != ref || p.Commit != "parkedsha1-1" ||
		!strings.Contains(p.Action, ref) || !strings.Contains(p.Reason, "1.1") {
		t.Fatalf("parked %+v", p)
	}
	if st.Escalation != nil || st.Status != RunPaused || !strings.Contains(st.PauseReason, "1.1") {
		t.Fatalf("escalation %+v, status %s (%s): the run is not escalated", st.Escalation, st.Status, st.PauseReason)
	}
	if len(h.repo.parked) != 1 || !slices.Equal(h.repo.parked[0].Paths, []string{"src/one.go"}) || h.repo.parked[0].Ref != ref {
		t.Fatalf("parks %+v, want 1-1's src/one.go on %s", h.repo.parked, ref)
	}
	if evs := ev.of(EventParked); len(evs) != 1 || evs[0].Unit != "1.1" || evs[0].Code != CodeRetriesExhausted || evs[0].Message != p.Action {
		t.Fatalf("parked events %+v", evs)
	}
	if evs := ev.of(EventEscalated); len(evs) != 0 {
		t.Fatalf("escalated events %+v: a park is no escalation", evs)
	}
	if !hasLog(st, "1.4", "waits on 1.1, parked") {
		t.Fatalf("log %+v: 1.4 does not say it waits", st.Log)
	}
	if sum := Summarize(st, res.StatePath); sum.Outcome != string(OutcomeDoneWithParked) {
		t.Fatalf("runs shows the run %q", sum.Outcome)
	}
	doc, err := os.ReadFile(res.StatePath)
	if err != nil || !strings.Contains(string(doc), "## Parked") || !strings.Contains(string(doc), "### 1.1") ||
		!strings.Contains(string(doc), "- **Its work:** `"+ref+"`") {
		t.Fatalf("the state document does not show the parked story (%v):\n%s", err, doc)
	}

	// Its base is taken again: other stories landed on it meanwhile.
	st.Unit("1-1").Base = "base-before-1.2-and-1.3"
	if err := SaveState(res.StatePath, st); err != nil {
		t.Fatal(err)
	}
	*crash1 = false
	res, err = h.runParking(ev, true)
	if err != nil || res.Outcome != OutcomeDone {
		t.Fatalf("resume: outcome %q, err %v", res.Outcome, err)
	}
	st = h.saved(res)
	if st.Unit("1-1").Base != "" {
		t.Fatalf("the resumed parked story kept its old base %q", st.Unit("1-1").Base)
	}
	if !slices.Equal(h.repo.unparked, []string{ref}) || !hasLog(st, "1.1", "taken up again with its parked work from "+ref) {
		t.Fatalf("unparked %v: the resumed story does not get its work back", h.repo.unparked)
	}
	if !slices.ContainsFunc(h.repo.commits, func(c CommitRequest) bool { return c.Story.Key == "1-1" && slices.Contains(c.Paths, "src/one.go") }) {
		t.Fatalf("commits %+v: 1-1's parked work is not in its commit", h.repo.commits)
	}
	for _, u := range st.Units {
		if u.Status != StatusDone || u.Parked != nil {
			t.Fatalf("after resume %s is %s (parked %+v)", u.Key, u.Status, u.Parked)
		}
	}
}

// A blocker that concerns its story alone parks it; one that concerns the
// run pauses it, parking or not; --on-escalation pause pauses on both.
func TestABlockerParksOnlyWhatConcernsItsStory(t *testing.T) {
	blocked := func(park bool) *hookPipeline {
		return &hookPipeline{steps: []string{StepDev, StepCommit},
			dispatch: func(StoryDispatch) (Dispatched, error) { return Dispatched{Prompt: "/worker"}, nil },
			outcome: func(d StoryDispatch, _ StepResult) StepOutcome {
				if d.Story.Key != "1-1" {
					return StepOutcome{}
				}
				return StepOutcome{Blocker: &Blocker{Code: "build_auto_blocked", Park: park, Err: errors.New(`blocked: "intent gap"`), Action: "answer the questions"}}
			}}
	}
	for _, tt := range []struct {
		name string
		park bool
		mode string
		want Outcome
	}{
		{"a person-needing condition parks", true, OnEscalationPark, OutcomeDoneWithParked},
		{"a run-wide condition pauses", false, OnEscalationPark, OutcomeEscalated},
		{"pause mode pauses", true, OnEscalationPause, OutcomeEscalated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "1-1", "1-2")
			h.steps.script = func(context.Context, StepRequest) StepResult { return StepResult{FinalState: FinalCompleted} }
			d := h.deps()
			d.Pipeline = blocked(tt.park)
			o := h.options()
			o.OnEscalation = tt.mode
			res, err := Run(context.Background(), o, d)
			if res == nil || res.Outcome != tt.want {
				t.Fatalf("outcome %v, err %v; want %s", res, err, tt.want)
			}
			st := h.saved(res)
			switch tt.want {
			case OutcomeDoneWithParked:
				if u := st.Unit("1-1"); u.Status != StatusParked || u.Parked.Action != "answer the questions" || u.Parked.Code != "build_auto_blocked" {
					t.Fatalf("1-1 %s %+v", u.Status, u.Parked)
				}
				if st.Unit("1-2").Status != StatusDone {
					t.Fatalf("1-2 is %s: the other story lands", st.Unit("1-2").Status)
				}
			default:
				if !errors.Is(err, ErrEscalated) || st.Escalation == nil || st.Escalation.Code != "build_auto_blocked" || st.Unit("1-1").Parked != nil {
					t.Fatalf("err %v, escalation %+v", err, st.Escalation)
				}
			}
		})
	}
}

// Out of retries under --on-escalation pause, the run pauses as it always
// did: no park, no ref, the other stories left.
func TestPauseModeEscalatesOutOfRetries(t *testing.T) {
	h, ev, _ := parkHarness(t)
	d := h.deps()
	d.Report = ev
	res, err := Run(context.Background(), h.options(), d)
	if !errors.Is(err, ErrEscalated) || res.Outcome != OutcomeEscalated {
		t.Fatalf("outcome %q, err %v", res.Outcome, err)
	}
	st := h.saved(res)
	if st.Escalation == nil || st.Escalation.Unit != "1.1" || st.Escalation.Code != "" || len(h.repo.parked) != 0 || len(ev.of(EventParked)) != 0 {
		t.Fatalf("escalation %+v, parks %+v", st.Escalation, h.repo.parked)
	}
	if st.Unit("1-1").Status != StatusEscalated || st.Unit("1-3").Status == StatusDone {
		t.Fatalf("1-1 %s, 1-3 %s: the run stops at the escalation", st.Unit("1-1").Status, st.Unit("1-3").Status)
	}
}

func hasLog(st *State, unit, msg string) bool {
	for _, l := range st.Log {
		if l.Unit == unit && strings.Contains(l.Message, msg) {
			return true
		}
	}
	return false
}
