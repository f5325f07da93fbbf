package orchestrator

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func planFor(t *testing.T, p *fakeBacklog, stories string) (*State, error) {
	t.Helper()
	return NewPlan(p, PlanInput{RunID: "run-x", ProjectRoot: "/p", Policy: DefaultPolicy(), Now: time.Unix(0, 0),
		Config: RunConfig{Stories: stories, Agent: "sim", Parallel: 1, MaxCycles: 5}})
}

func TestPlanSkipsDoneStoriesExistingFilesAndStoriesInReview(t *testing.T) {
	t.Parallel()
	p := newFakeBacklog("1-1", "1-2", "1-3")
	p.set("1-1", func(s *StoryInfo) { s.Status = StatusDone })
	p.set("1-2", func(s *StoryInfo) { s.HasFile = true })
	p.set("1-3", func(s *StoryInfo) { s.HasFile, s.Status = true, "review" })
	st, err := planFor(t, p, "all")
	if err != nil {
		t.Fatal(err)
	}
	if st.Unit("1-1") != nil || st.StoriesRemaining() != 2 {
		t.Fatalf("a done story was planned: %d remaining", st.StoriesRemaining())
	}
	if s := st.Unit("1-2").Step(StepCreate); s.Status != StatusSkipped {
		t.Fatalf("create with a story file: %+v", s)
	}
	if s := st.Unit("1-3").Step(StepDev); s.Status != StatusSkipped || st.Unit("1-3").Step(StepReview).Status != StatusPending {
		t.Fatalf("dev of a story in review: %+v", s)
	}
}

func TestPlanAddsARetroOnlyForEpicsTheRunFinishes(t *testing.T) {
	t.Parallel()
	p := newFakeBacklog("1-1", "1-2", "2-1", "2-2")
	p.set("1-1", func(s *StoryInfo) { s.Status = StatusDone })
	st, err := planFor(t, p, "1-2,2-1")
	if err != nil {
		t.Fatal(err)
	}
	retro := st.Unit("epic-1-retro")
	if retro == nil || !reflect.DeepEqual(retro.DependsOn, []string{"1-2"}) {
		t.Fatalf("epic 1 retro %+v", retro)
	}
	if st.Unit("epic-2-retro") != nil {
		t.Fatal("epic 2 is not finished by the run (2.2 not selected) but got a retro")
	}
	p.retro["1"] = true
	if st, _ = planFor(t, p, "1-2"); st.Unit("epic-1-retro") != nil {
		t.Fatal("a retrospective already done was planned again")
	}
}

func TestPlanRefusesUnmetDependenciesAndCycles(t *testing.T) {
	t.Parallel()
	p := newFakeBacklog("1-1", "1-2", "1-3")
	p.set("1-3", func(s *StoryInfo) { s.DependsOn = []string{"1-2"} })
	if _, err := planFor(t, p, "1-3"); !errors.Is(err, ErrDependency) || !strings.Contains(err.Error(), "1.2") {
		t.Fatalf("unselected dependency: %v", err)
	}
	p.set("1-2", func(s *StoryInfo) { s.Status = StatusDone })
	st, err := planFor(t, p, "1-3")
	if err != nil || len(st.Unit("1-3").DependsOn) != 0 {
		t.Fatalf("a done dependency should be dropped: %v", err)
	}
	p.set("1-2", func(s *StoryInfo) { s.Status, s.DependsOn = "backlog", []string{"1-3"} })
	if _, err := planFor(t, p, "all"); !errors.Is(err, ErrDependencyCycle) {
		t.Fatalf("cycle: %v", err)
	}
}

func TestWavesGroupStoriesByDependencyDepth(t *testing.T) {
	t.Parallel()
	p := newFakeBacklog("1-1", "1-2", "1-3", "1-4")
	p.retro["1"] = true
	p.set("1-2", func(s *StoryInfo) { s.DependsOn = []string{"1-1"} })
	p.set("1-3", func(s *StoryInfo) { s.DependsOn = []string{"1-2"} })
	st, err := planFor(t, p, "all")
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, w := range Waves(st) {
		var keys []string
		for _, u := range w {
			keys = append(keys, u.Key)
		}
		got = append(got, keys)
	}
	want := [][]string{{"1-1", "1-4"}, {"1-2"}, {"1-3"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("waves %v, want %v", got, want)
	}
}

func TestNextMove(t *testing.T) {
	t.Parallel()
	pol := DefaultPolicy()
	sp := pol.Step(StepDev)
	agents := agentPair{Primary: "claude", Fallback: "codex"}
	att := func(final string, cycle int) Attempt { return Attempt{FinalState: final, Cycle: cycle, Agent: "x"} }
	cases := []struct {
		name     string
		step     string
		attempts []Attempt
		budget   int
		want     move
	}{
		{"first attempt", StepDev, nil, 0, move{Agent: "claude", Role: RolePrimary}},
		{"after a crash: fallback, backoff", StepDev, []Attempt{att(FinalCrashed, 0)}, 0,
			move{Agent: "codex", Role: RoleFallback, Backoff: 10 * time.Second}},
		{"after two failures: primary, doubled", StepDev, []Attempt{att(FinalCrashed, 0), att(FinalIncomplete, 0)}, 0,
			move{Agent: "claude", Role: RolePrimary, Backoff: 20 * time.Second}},
		{"interrupted attempts do not count", StepDev, []Attempt{att(FinalInterrupted, 0), att(FinalInterrupted, 0)}, 0,
			move{Agent: "claude", Role: RolePrimary}},
		{"review: unverified ends the cycle", StepReview, []Attempt{att(FinalIncomplete, 1)}, 0,
			move{Cycle: 2, Agent: "claude", Role: RolePrimary}},
		{"review: a crash retries the same cycle", StepReview, []Attempt{att(FinalIncomplete, 1), att(FinalCrashed, 2)}, 0,
			move{Cycle: 2, Agent: "codex", Role: RoleFallback, Backoff: 10 * time.Second}},
		{"review: a new budget keeps counting cycles", StepReview,
			[]Attempt{att(FinalIncomplete, 1), att(FinalIncomplete, 2)}, 2, move{Cycle: 3, Agent: "claude", Role: RolePrimary}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := &StepState{Name: c.step, Attempts: c.attempts, BudgetFrom: c.budget}
			if got := nextMove(st, sp, pol, agents); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
	three := &StepState{Name: StepDev, Attempts: []Attempt{att(FinalCrashed, 0), att(FinalCrashed, 0), att(FinalStuck, 0)}}
	if m := nextMove(three, sp, pol, agents); !m.Exhausted || !strings.Contains(m.Reason, "stuck") {
		t.Fatalf("after 1 + 2 retries: %+v", m)
	}
	var five []Attempt
	for c := 1; c <= 5; c++ {
		five = append(five, att(FinalIncomplete, c))
	}
	if m := nextMove(&StepState{Name: StepReview, Attempts: five}, sp, pol, agents); !m.Exhausted {
		t.Fatalf("after 5 review cycles: %+v", m)
	}
}

func TestBackoffIsCapped(t *testing.T) {
	t.Parallel()
	pol := DefaultPolicy()
	pol.MaxBackoff = 30 * time.Second
	sp := StepPolicy{Backoff: 10 * time.Second}
	got := []time.Duration{pol.backoff(sp, 0), pol.backoff(sp, 1), pol.backoff(sp, 2), pol.backoff(sp, 3), pol.backoff(sp, 9)}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("backoffs %v, want %v", got, want)
	}
}

func TestStateDocumentRoundTripsAndReadsAsMarkdown(t *testing.T) {
	t.Parallel()
	p := newFakeBacklog("1-1", "1-2")
	p.set("1-1", func(s *StoryInfo) { s.Title = "Login | OAuth" })
	st, err := planFor(t, p, "all")
	if err != nil {
		t.Fatal(err)
	}
	st.Unit("1-1").Step(StepDev).Attempts = []Attempt{{N: 1, Agent: "sim", Role: RolePrimary, FinalState: FinalCrashed, Reason: "exit_code_1\n```"}}
	doc, err := RenderState(st)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseState("doc.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, st) {
		t.Fatalf("round trip changed the state:\n%+v\n%+v", back, st)
	}
	for _, want := range []string{"# Story run run-x", "## Configuration", "| 1.1 | Login \\| OAuth |", "## Action log", "## Machine state"} {
		if !strings.Contains(string(doc), want) {
			t.Fatalf("document lacks %q:\n%s", want, doc)
		}
	}
	if _, err := ParseState("x.md", []byte("# notes\n")); !errors.Is(err, ErrNoMachineState) {
		t.Fatalf("plain markdown: %v", err)
	}
}
