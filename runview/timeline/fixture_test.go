package timeline

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
	"github.com/story-automator/story-automator/spend"
)

// fixturePath is a state document of a finished run with something of
// everything the timeline shows: retries, fallback attempts, a review
// cycle, an escalation the user resumed, an interrupted attempt, one that
// could not start, and two limited attempts followed by a limit wait.
// It is built by fixtureState below; -update-fixture writes it again.
const fixturePath = "testdata/run-fixture.md"

var updateFixture = flag.Bool("update-fixture", false, "rewrite testdata/run-fixture.md from fixtureState")

// fixtureAt is a time of the fixture run: minutes and seconds after 09:00 UTC.
func fixtureAt(min, sec int) string {
	return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC).Add(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second).
		Format(time.RFC3339)
}

// fixtureAttempt is one attempt from minute m0:s0 to m1:s1.
type fixtureAttempt struct {
	agent, role, state, reason string
	cycle                      int
	m0, s0, m1, s1             int
	in, out, cacheRead         int64
	detail                     string
	noUsage                    string
}

func (f fixtureAttempt) attempt(n int, story, step string) orchestrator.Attempt {
	from, to := fixtureAt(f.m0, f.s0), fixtureAt(f.m1, f.s1)
	wall := time.Duration((f.m1-f.m0)*60+f.s1-f.s0) * time.Second
	a := orchestrator.Attempt{N: n, Cycle: f.cycle, Agent: f.agent, Role: f.role, FinalState: f.state, Reason: f.reason,
		StartedAt: from, EndedAt: to, WallMs: wall.Milliseconds(), AgentMs: wall.Milliseconds() - 400, Detail: f.detail,
		Session: fmt.Sprintf("sa-fixture-%s-%s-%d", story, step, n), Verifier: "workflow " + step}
	if f.noUsage != "" {
		a.Session, a.AgentMs, a.Verifier, a.UsageNote = "", 0, "", f.noUsage
		return a
	}
	model, inP, outP, readP := "claude-sonnet-4-5", 3.0, 15.0, 0.3
	if f.agent == "codex" {
		model, inP, outP, readP = "gpt-5-codex", 1.25, 10.0, 0.125
	}
	cost := (float64(f.in)*inP + float64(f.out)*outP + float64(f.cacheRead)*readP) / 1e6
	a.Model = model
	a.Usage = &spend.Usage{InputTokens: f.in, OutputTokens: f.out, CacheReadTokens: f.cacheRead, CostUSD: &cost}
	return a
}

func ok(agent, role string, m0, s0, m1, s1 int, in, out int64) fixtureAttempt {
	return fixtureAttempt{agent: agent, role: role, state: orchestrator.FinalCompleted, m0: m0, s0: s0, m1: m1, s1: s1,
		in: in, out: out, cacheRead: in * 6}
}

func failed(agent, role, state, reason string, m0, s0, m1, s1 int, in, out int64) fixtureAttempt {
	return fixtureAttempt{agent: agent, role: role, state: state, reason: reason, m0: m0, s0: s0, m1: m1, s1: s1,
		in: in, out: out, cacheRead: in * 4}
}

func fixtureStory(key, title string, steps map[string][]fixtureAttempt, committed [2]int, sha string) *orchestrator.Unit {
	u := &orchestrator.Unit{Key: key, Kind: orchestrator.KindStory, Epic: "1", Dotted: key[:1] + "." + key[2:], Title: title,
		Status: orchestrator.StatusDone, Commit: sha}
	for _, name := range orchestrator.StorySteps() {
		st := &orchestrator.StepState{Name: name, Status: orchestrator.StatusVerified}
		for i, f := range steps[name] {
			st.Attempts = append(st.Attempts, f.attempt(i+1, key, name))
		}
		if n := len(st.Attempts); n > 0 {
			st.VerifiedAt = st.Attempts[n-1].EndedAt
		}
		if name == orchestrator.StepCommit {
			st.VerifiedAt = fixtureAt(committed[0], committed[1])
		}
		u.Steps = append(u.Steps, st)
	}
	return u
}

func fixtureState() *orchestrator.State {
	const claude, codex, prim, fb = "claude", "codex", orchestrator.RolePrimary, orchestrator.RoleFallback
	review1 := failed(claude, prim, orchestrator.FinalIncomplete, "not_verified", 37, 0, 44, 0, 9000, 2100)
	review1.cycle, review1.detail = 1, "review left 2 findings open"
	review2 := ok(claude, prim, 44, 10, 50, 0, 7000, 1500)
	review2.cycle = 2
	s11 := fixtureStory("1-1", "User registration", map[string][]fixtureAttempt{
		orchestrator.StepCreate: {ok(claude, prim, 0, 0, 4, 0, 6000, 1800)},
		orchestrator.StepDev: {failed(claude, prim, orchestrator.FinalTimeout, "timeout", 4, 5, 19, 5, 21000, 5200),
			ok(codex, fb, 19, 35, 31, 0, 18000, 6100)},
		orchestrator.StepAutomate: {ok(claude, prim, 31, 10, 36, 50, 8000, 2600)},
		orchestrator.StepReview:   {review1, review2},
	}, [2]int{50, 20}, "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39")
	interrupted := failed(codex, fb, orchestrator.FinalInterrupted, "stopped: another step escalated", 47, 40, 62, 5, 4000, 900)
	s12 := fixtureStory("1-2", `Login & "remember me"`, map[string][]fixtureAttempt{
		orchestrator.StepCreate: {ok(claude, prim, 0, 0, 5, 0, 6500, 1900)},
		orchestrator.StepDev: {failed(claude, prim, orchestrator.FinalLimited, "usage_limit", 5, 5, 9, 0, 7000, 1200),
			failed(codex, fb, orchestrator.FinalLimited, "rate_limit", 9, 2, 12, 0, 3000, 400),
			ok(claude, prim, 32, 0, 45, 0, 24000, 7400)},
		orchestrator.StepAutomate: {failed(claude, prim, orchestrator.FinalCrashed, "exit_code_1", 45, 10, 47, 10, 2000, 300),
			interrupted, ok(codex, fb, 80, 0, 86, 0, 9000, 2500)},
		orchestrator.StepReview: {func() fixtureAttempt { r := ok(claude, prim, 86, 10, 93, 40, 8000, 1900); r.cycle = 1; return r }()},
	}, [2]int{94, 20}, "8c4b2a6e1f0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b")
	stuck := failed(claude, prim, orchestrator.FinalStuck, "dialog", 55, 10, 62, 0, 5000, 700)
	stuck.detail = "the agent waits at its folder trust dialog"
	s13 := fixtureStory("1-3", "Password reset", map[string][]fixtureAttempt{
		orchestrator.StepCreate: {ok(claude, prim, 50, 40, 55, 0, 6200, 1700)},
		orchestrator.StepDev:    {stuck, ok(claude, prim, 80, 0, 93, 0, 22000, 6900)},
		orchestrator.StepAutomate: {{agent: claude, role: prim, state: orchestrator.FinalError,
			reason: "spawn: tmux new-session: exit status 1", m0: 93, s0: 5, m1: 93, s1: 6, noUsage: "the attempt never started an agent"},
			ok(codex, fb, 93, 36, 98, 0, 8500, 2300)},
		orchestrator.StepReview: {func() fixtureAttempt { r := ok(claude, prim, 98, 10, 105, 0, 7600, 1600); r.cycle = 1; return r }()},
	}, [2]int{105, 20}, "c0ffee5a1b2c3d4e5f60718293a4b5c6d7e8f901")
	s13.DependsOn = []string{"1-1"}
	retro := &orchestrator.Unit{Key: "epic-1-retro", Kind: orchestrator.KindRetro, Epic: "1", Dotted: "epic 1",
		Title: "retrospective", Status: orchestrator.StatusDone, Commit: "5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f80",
		Steps: []*orchestrator.StepState{
			{Name: orchestrator.StepRetro, Status: orchestrator.StatusVerified, VerifiedAt: fixtureAt(110, 0),
				Attempts: []orchestrator.Attempt{ok(claude, prim, 105, 30, 110, 0, 5000, 1500).attempt(1, "epic-1", "retro")}},
			{Name: orchestrator.StepCommit, Status: orchestrator.StatusVerified, VerifiedAt: fixtureAt(110, 10)},
		}}
	root := "/home/dev/shop"
	st := &orchestrator.State{Version: orchestrator.StateVersion, RunID: "run-20261120-090000-f1e3", Status: orchestrator.RunDone,
		ProjectRoot: root, StartedAt: fixtureAt(0, 0), UpdatedAt: fixtureAt(110, 15), FinishedAt: fixtureAt(110, 15),
		Config: orchestrator.RunConfig{Epic: "1", Stories: "all", Agent: claude, FallbackAgent: codex, Parallel: 2,
			MaxCycles: 3, StateFile: root + "/.story-automator/runs/run-20261120-090000-f1e3.md",
			MarkerFile: root + "/.claude/.story-automator-active"},
		Units:    []*orchestrator.Unit{s11, s12, s13, retro},
		ActiveMs: (110*60 + 15 - 18*60) * 1000,
	}
	st.Log = []orchestrator.LogEntry{
		{At: fixtureAt(0, 0), Message: "run planned: 3 stories selected, 3 to do"},
		{At: fixtureAt(12, 0), Unit: "1.2", Step: orchestrator.StepDev, Message: "waiting for the rate_limit to lift (claude and codex are limited)"},
		{At: fixtureAt(32, 0), Unit: "1.2", Step: orchestrator.StepDev, Message: "the limit lifted; going on"},
		{At: fixtureAt(62, 0), Unit: "1.3", Step: orchestrator.StepDev, Message: "escalated: the agent waits at its folder trust dialog"},
		{At: fixtureAt(62, 5), Message: "run paused: escalated: dev story of 1.3: the agent waits at its folder trust dialog"},
		{At: fixtureAt(80, 0), Message: "run resumed"},
		{At: fixtureAt(110, 15), Message: "run finished: every story done"},
	}
	return st
}

func TestFixtureIsTheStateDocumentFixtureStateWrites(t *testing.T) {
	t.Parallel()
	data, err := orchestrator.RenderState(fixtureState())
	if err != nil {
		t.Fatal(err)
	}
	if *updateFixture {
		if err := os.WriteFile(fixturePath, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(data) {
		t.Fatalf("%s is not what fixtureState renders; rerun with -update-fixture", fixturePath)
	}
	st, err := orchestrator.LoadState(filepath.FromSlash(fixturePath))
	if err != nil {
		t.Fatal(err)
	}
	sum := orchestrator.Summarize(st, fixturePath)
	if sum.Attempts != 20 || sum.Escalations != 1 || sum.StoriesDone != 3 {
		t.Fatalf("fixture summary %+v", sum)
	}
}
