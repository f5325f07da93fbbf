package stophook

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

var loopNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const loopPrompt = "Make every test in ./... pass. Commit after each fix."

// loopMarker is an owned, active loop at iteration 2 of 5 whose hook has seen
// its heartbeat and git state.
func loopMarker(mut ...func(*marker.Marker)) *marker.Marker {
	hb := marker.Timestamp(loopNow.Add(-time.Hour))
	m := &marker.Marker{
		Version: 1, Mode: marker.ModeLoop, Status: marker.StatusActive, OwnerSession: "owner",
		CreatedAt: hb, Heartbeat: hb, StopHookSeenHeartbeat: hb, StopHookBlocks: 1,
		Loop: &marker.LoopState{Prompt: loopPrompt, Iteration: 2, MaxIterations: 5,
			CompletionPromise: "ALL TESTS GREEN", GitFingerprint: "g1:aaa", StartedAt: hb},
	}
	for _, f := range mut {
		f(m)
	}
	return m
}

func loopEnv(mut ...func(*Env)) Env {
	e := Env{MaxBlocks: DefaultMax, StaleAfter: DefaultStale, ProcessAlive: func(int) bool { return true }}
	e.Loop.GitFingerprint = "g1:aaa"
	for _, f := range mut {
		f(&e)
	}
	return e
}

func loopIn(msg string) Input {
	active := true
	return Input{SessionID: "owner", StopHookActive: &active, HookEventName: "Stop", LastAssistantMessage: &msg}
}

func withAdvisor(a AdvisorAnswer, err error) func(*Env) {
	return func(e *Env) { e.Loop.Advisor = &AdvisorVerdict{Answer: a, Err: err} }
}

func withBackground(in Input) Input {
	in.BackgroundTasks = []byte(`[{"id":"b1","status":"running"}]`)
	return in
}

func withStrategy(s string) func(*marker.Marker) {
	return func(m *marker.Marker) { m.Loop.ExitStrategy = s }
}

type loopWant struct {
	kind      string // "" = no owner decision
	block     bool
	reason    string // the exact block reason (the next prompt), when block
	sys       string // substring of the systemMessage
	remove    bool
	written   bool
	status    string
	iteration int
	blocks    int
	consult   bool
}

func TestDecideLoop(t *testing.T) {
	cont := loopWant{kind: KindContinue, block: true, reason: loopPrompt, sys: "iteration 3/5", written: true, status: "active", iteration: 3, blocks: 2}
	done := func(kind, sys string) loopWant {
		return loopWant{kind: kind, sys: sys, remove: true, written: true, status: "active", iteration: 2, blocks: 2}
	}
	paused := loopWant{kind: KindPaused, sys: "paused", written: true, status: "paused", iteration: 2, blocks: 1}
	escalate := func(kind, sys string) loopWant {
		return loopWant{kind: kind, sys: sys, written: true, status: "active", iteration: 2, blocks: 1}
	}
	fixPlan := func(text string) func(*Env) { return func(e *Env) { e.Loop.FixPlan = text } }
	cases := []struct {
		name string
		in   Input
		m    *marker.Marker
		env  Env
		want loopWant
	}{
		{"plain answer continues with the prompt", loopIn("Fixed one test, two to go."), loopMarker(), loopEnv(), cont},
		{"STORY_AUTOMATOR_COMPLETE on its own line", loopIn("All fixed.\n  STORY_AUTOMATOR_COMPLETE  \n"), loopMarker(), loopEnv(), done(KindComplete, "complete")},
		{"FORGE_COMPLETE", loopIn("FORGE_COMPLETE"), loopMarker(), loopEnv(), done(KindComplete, "FORGE_COMPLETE")},
		{"RALPH_COMPLETE", loopIn("done\r\nRALPH_COMPLETE\r\n"), loopMarker(), loopEnv(), done(KindComplete, "RALPH_COMPLETE")},
		{"control line embedded in a sentence is ignored", loopIn("I will print STORY_AUTOMATOR_COMPLETE when done."), loopMarker(), loopEnv(), cont},
		{"control line in a code fence is ignored", loopIn("Protocol:\n```\nSTORY_AUTOMATOR_COMPLETE\n```\nstill working"), loopMarker(), loopEnv(), cont},
		{"STORY_AUTOMATOR_PAUSE pauses and keeps the loop", loopIn("I need the API key.\nSTORY_AUTOMATOR_PAUSE"), loopMarker(), loopEnv(), paused},
		{"RALPH_PAUSE pauses", loopIn("RALPH_PAUSE"), loopMarker(), loopEnv(), paused},
		{"pause wins over complete in one message", loopIn("FORGE_COMPLETE\nFORGE_PAUSE"), loopMarker(), loopEnv(), paused},
		{"promise with extra whitespace is accepted", loopIn("Done.\n   <promise>  ALL \t TESTS   GREEN </promise>  "), loopMarker(), loopEnv(), done(KindComplete, "<promise>ALL TESTS GREEN</promise>")},
		{"promise across lines is accepted", loopIn("<promise>ALL TESTS\nGREEN</promise>"), loopMarker(), loopEnv(), done(KindComplete, "promise")},
		{"promise mismatch continues", loopIn("<promise>SOME TESTS GREEN</promise>"), loopMarker(), loopEnv(), cont},
		{"promise is case sensitive", loopIn("<promise>all tests green</promise>"), loopMarker(), loopEnv(), cont},
		{"promise inside a longer line does not count", loopIn("I will say <promise>ALL TESTS GREEN</promise> later"), loopMarker(), loopEnv(), cont},
		{"promise without a configured promise does not count", loopIn("<promise>ALL TESTS GREEN</promise>"), loopMarker(func(m *marker.Marker) { m.Loop.CompletionPromise = "" }), loopEnv(), cont},
		{"one below the limit continues to the limit", loopIn("working"), loopMarker(func(m *marker.Marker) { m.Loop.Iteration = 4 }),
			loopEnv(), loopWant{kind: KindContinue, block: true, reason: loopPrompt, sys: "iteration 5/5", written: true, status: "active", iteration: 5, blocks: 2}},
		{"max-iterations at exactly the limit ends the loop", loopIn("working"), loopMarker(func(m *marker.Marker) { m.Loop.Iteration = 5 }),
			loopEnv(), loopWant{kind: KindMaxIterations, sys: "limit 5", remove: true, written: true, status: "active", iteration: 5, blocks: 2}},
		{"a control line beats the limit", loopIn("STORY_AUTOMATOR_COMPLETE"), loopMarker(func(m *marker.Marker) { m.Loop.Iteration = 5 }),
			loopEnv(), loopWant{kind: KindComplete, remove: true, written: true, status: "active", iteration: 5, blocks: 2}},
		{"a missing limit is never unlimited", loopIn("working"), loopMarker(func(m *marker.Marker) { m.Loop.Iteration = 20; m.Loop.MaxIterations = 0 }),
			loopEnv(), loopWant{kind: KindMaxIterations, sys: "limit 20", remove: true, written: true, status: "active", iteration: 20, blocks: 2}},
		{"advisor satisfied at the threshold ends the loop", loopIn("done?"), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = "adv"; m.Loop.Threshold = 0.6 }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.6, StopRecommended: true}, nil)), done(KindSatisfied, "satisfied")},
		{"advisor satisfied below the threshold escalates", loopIn("done?"), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = "adv"; m.Loop.Threshold = 0.6 }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.59, StopRecommended: true, Prediction: "ship it"}, nil)), escalate(KindEscalateLow, "below the threshold")},
		{"advisor prediction becomes the next prompt", loopIn("step 1 done"), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = "adv" }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.9, Prediction: "Now write the migration."}, nil)),
			loopWant{kind: KindContinue, block: true, reason: "Now write the migration.", sys: "iteration 3/5", written: true, status: "active", iteration: 3, blocks: 2}},
		{"advisor confident with an empty prediction is an advisor error", loopIn("x"), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = "adv" }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.9}, nil)), escalate(KindEscalateAdvisor, "empty prompt")},
		{"advisor timeout escalates", loopIn("x"), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = "adv" }),
			loopEnv(withAdvisor(AdvisorAnswer{}, errors.New("advisor timed out after 10s"))), escalate(KindEscalateAdvisor, "timed out")},
		{"advisor garbage escalates", loopIn("x"), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = "adv" }),
			loopEnv(func(e *Env) {
				_, err := ParseAdvisorAnswer([]byte("I think you should stop"))
				e.Loop.Advisor = &AdvisorVerdict{Err: err}
			}), escalate(KindEscalateAdvisor, "malformed")},
		{"advisor not yet consulted asks the shell", loopIn("x"), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = "adv" }), loopEnv(), loopWant{consult: true}},
		{"advisor continue, then an exit strategy that fires ends the loop", loopIn("All done.\nSTATUS: COMPLETE\nEXIT_SIGNAL: true"),
			loopMarker(withStrategy("auto"), func(m *marker.Marker) { m.Loop.Advisor = "adv" }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.9, Prediction: "Polish the docs."}, nil)), done(KindComplete, "exit strategy auto")},
		{"advisor continue, then circuit_breaker without progress pauses the loop", loopIn("x"),
			loopMarker(withStrategy("circuit_breaker"), func(m *marker.Marker) { m.Loop.Advisor = "adv"; m.Loop.NoProgressIterations = 2 }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.9, Prediction: "Try again."}, nil)),
			loopWant{kind: KindBreakerOpen, sys: "3 consecutive iterations without progress", written: true, status: "paused", iteration: 2, blocks: 1}},
		{"advisor continue with a strategy that does not fire blocks with the prediction", loopIn("STATUS: COMPLETE"),
			loopMarker(withStrategy("auto"), func(m *marker.Marker) { m.Loop.Advisor = "adv" }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.9, Prediction: "Now write the migration."}, nil)),
			loopWant{kind: KindContinue, block: true, reason: "Now write the migration.", sys: "iteration 3/5", written: true, status: "active", iteration: 3, blocks: 2}},
		{"advisor satisfied wins over a strategy", loopIn("x"),
			loopMarker(withStrategy("circuit_breaker"), func(m *marker.Marker) { m.Loop.Advisor = "adv"; m.Loop.NoProgressIterations = 2 }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.9, StopRecommended: true}, nil)), done(KindSatisfied, "satisfied")},
		{"advisor below the threshold escalates though a strategy would fire", loopIn("x"),
			loopMarker(withStrategy("circuit_breaker"), func(m *marker.Marker) { m.Loop.Advisor = "adv"; m.Loop.NoProgressIterations = 2 }),
			loopEnv(withAdvisor(AdvisorAnswer{Confidence: 0.2, Prediction: "?"}, nil)), escalate(KindEscalateLow, "below the threshold")},
		{"advisor error escalates though a strategy would fire", loopIn("All done.\nSTATUS: COMPLETE\nEXIT_SIGNAL: true"),
			loopMarker(withStrategy("auto"), func(m *marker.Marker) { m.Loop.Advisor = "adv" }),
			loopEnv(withAdvisor(AdvisorAnswer{}, errors.New("advisor failed: exit status 3"))), escalate(KindEscalateAdvisor, "exit status 3")},
		{"the limit comes before the advisor", loopIn("x"), loopMarker(func(m *marker.Marker) { m.Loop.Advisor = "adv"; m.Loop.Iteration = 5 }),
			loopEnv(), loopWant{kind: KindMaxIterations, remove: true, written: true, status: "active", iteration: 5, blocks: 2}},
		{"bystander during a loop changes nothing", Input{SessionID: "other", LastAssistantMessage: loopIn("STORY_AUTOMATOR_COMPLETE").LastAssistantMessage}, loopMarker(), loopEnv(), loopWant{}},
		{"unowned loop guards any session", Input{SessionID: "anyone"}, loopMarker(func(m *marker.Marker) {
			m.OwnerSession = ""
			m.Heartbeat = marker.Timestamp(loopNow.Add(-time.Minute))
			m.StopHookSeenHeartbeat = m.Heartbeat
		}), loopEnv(), cont},
		{"paused loop changes nothing", loopIn("x"), loopMarker(func(m *marker.Marker) { m.Status = marker.StatusPaused }), loopEnv(), loopWant{}},
		{"background task allows the stop", func() Input {
			in := loopIn("x")
			in.BackgroundTasks = []byte(`[{"id":"b1","status":"running"}]`)
			return in
		}(),
			loopMarker(), loopEnv(), loopWant{kind: KindAllowBackground, written: true, status: "active", iteration: 2, blocks: 1}},
		{"complete line during a background task ends the loop", withBackground(loopIn("All fixed.\nSTORY_AUTOMATOR_COMPLETE")),
			loopMarker(), loopEnv(), done(KindComplete, "complete")},
		{"pause line during a background task pauses the loop", withBackground(loopIn("Need a human.\nFORGE_PAUSE")),
			loopMarker(), loopEnv(), paused},
		{"matching promise during a background task ends the loop", withBackground(loopIn("<promise>ALL TESTS GREEN</promise>")),
			loopMarker(), loopEnv(), done(KindComplete, "promise")},
		{"promise mismatch during a background task still waits for the task", withBackground(loopIn("<promise>SOME TESTS GREEN</promise>")),
			loopMarker(), loopEnv(), loopWant{kind: KindAllowBackground, written: true, status: "active", iteration: 2, blocks: 1}},
		{"transcript complete line during a background task ends the loop", withBackground(Input{SessionID: "owner"}),
			loopMarker(), loopEnv(func(e *Env) { e.Loop.TranscriptMessage = "RALPH_COMPLETE" }), done(KindComplete, "RALPH_COMPLETE")},
		{"transcript text stands in for a missing message", Input{SessionID: "owner"}, loopMarker(),
			loopEnv(func(e *Env) { e.Loop.TranscriptMessage = "ok\nSTORY_AUTOMATOR_COMPLETE" }), done(KindComplete, "complete")},
		{"auto fires on a strong completion signal", loopIn("All done.\nSTATUS: COMPLETE\nEXIT_SIGNAL: true"), loopMarker(withStrategy("auto")), loopEnv(), done(KindComplete, "exit strategy auto")},
		{"auto ignores a weak signal", loopIn("STATUS: COMPLETE"), loopMarker(withStrategy("auto")), loopEnv(), cont},
		{"done_signals fires at 40", loopIn("STATUS: COMPLETE"), loopMarker(withStrategy("done_signals")), loopEnv(), done(KindComplete, "done_signals")},
		{"fix_plan with every step done ends the loop", loopIn("x"), loopMarker(withStrategy("fix_plan"), func(m *marker.Marker) { m.Loop.FixPlan = "plan.md" }),
			loopEnv(fixPlan("- [x] a\n- [X] b\n")), done(KindComplete, "2 done")},
		{"fix_plan with a step out of attempts ends the loop", loopIn("x"), loopMarker(withStrategy("fix_plan"), func(m *marker.Marker) { m.Loop.FixPlan = "plan.md" }),
			loopEnv(fixPlan("- [x] a\n- [ ] b (attempts: 3/3)\n")), done(KindComplete, "1 out of attempts")},
		{"fix_plan with an open step continues", loopIn("x"), loopMarker(withStrategy("fix_plan"), func(m *marker.Marker) { m.Loop.FixPlan = "plan.md" }),
			loopEnv(fixPlan("- [x] a\n- [ ] b (attempts: 1/3)\n")), cont},
		{"fix_plan that cannot be read continues", loopIn("x"), loopMarker(withStrategy("fix_plan"), func(m *marker.Marker) { m.Loop.FixPlan = "plan.md" }),
			loopEnv(func(e *Env) { e.Loop.FixPlanErr = errors.New("gone") }), cont},
		{"circuit_breaker opens after 3 iterations without progress and pauses", loopIn("x"),
			loopMarker(withStrategy("circuit_breaker"), func(m *marker.Marker) { m.Loop.NoProgressIterations = 2 }), loopEnv(),
			loopWant{kind: KindBreakerOpen, sys: "3 consecutive iterations without progress", written: true, status: "paused", iteration: 2, blocks: 1}},
		{"circuit_breaker resets on a git change", loopIn("x"),
			loopMarker(withStrategy("circuit_breaker"), func(m *marker.Marker) { m.Loop.NoProgressIterations = 2 }),
			loopEnv(func(e *Env) { e.Loop.GitFingerprint = "g1:bbb" }),
			loopWant{kind: KindContinue, block: true, reason: loopPrompt, written: true, status: "active", iteration: 3, blocks: 0}},
		{"composite fires on any member", loopIn("x"), loopMarker(withStrategy("composite:auto,fix_plan"), func(m *marker.Marker) { m.Loop.FixPlan = "plan.md" }),
			loopEnv(fixPlan("- [x] only step\n")), done(KindComplete, "fix_plan")},
		{"breaker releases a loop without progress, keeps it", loopIn("x"), loopMarker(func(m *marker.Marker) { m.StopHookBlocks = 4 }), loopEnv(),
			loopWant{kind: KindBreakerOpen, sys: "stays active at iteration 2/5", written: true, status: "active", iteration: 2, blocks: 0}},
		{"a new commit is progress for the breaker", loopIn("x"), loopMarker(func(m *marker.Marker) { m.StopHookBlocks = 4 }),
			loopEnv(func(e *Env) { e.Loop.GitFingerprint = "g1:bbb" }), loopWant{kind: KindContinue, block: true, reason: loopPrompt, written: true, status: "active", iteration: 3, blocks: 0}},
		{"an unknown fingerprint is not progress", loopIn("x"), loopMarker(func(m *marker.Marker) { m.StopHookBlocks = 4; m.Loop.GitFingerprint = "" }),
			loopEnv(), loopWant{kind: KindBreakerOpen, written: true, status: "active", iteration: 2, blocks: 0}},
		{"completion beats the breaker", loopIn("STORY_AUTOMATOR_COMPLETE"), loopMarker(func(m *marker.Marker) { m.StopHookBlocks = 4 }), loopEnv(),
			loopWant{kind: KindComplete, remove: true, written: true, status: "active", iteration: 2, blocks: 5}},
		{"explicit stop_hook_active false resets the count", func() Input { in := loopIn("x"); f := false; in.StopHookActive = &f; return in }(),
			loopMarker(func(m *marker.Marker) { m.StopHookBlocks = 4 }), loopEnv(), loopWant{kind: KindContinue, block: true, reason: loopPrompt, written: true, status: "active", iteration: 3, blocks: 0}},
		{"an unowned loop whose hook ran lately is not stale", Input{SessionID: "s"}, loopMarker(func(m *marker.Marker) {
			m.OwnerSession = ""
			m.LastDecision = &marker.LastDecision{At: marker.Timestamp(loopNow.Add(-time.Minute)), Decision: KindContinue}
		}), loopEnv(), cont},
		{"an unowned loop silent for longer than the stale window is released", Input{SessionID: "s"}, loopMarker(func(m *marker.Marker) {
			m.OwnerSession = ""
			m.LastDecision = &marker.LastDecision{At: marker.Timestamp(loopNow.Add(-45 * time.Minute)), Decision: KindContinue}
		}), loopEnv(), loopWant{kind: KindReleaseStale, sys: "looks dead", written: true, status: "active", iteration: 2, blocks: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := tc.m.Encode()
			d := Decide(tc.in, tc.m, nil, tc.env, loopNow)
			checkLoopDecision(t, d, tc.want)
			if after, _ := tc.m.Encode(); string(after) != string(before) {
				t.Errorf("Decide changed its input marker")
			}
		})
	}
}

func checkLoopDecision(t *testing.T, d Decision, w loopWant) {
	t.Helper()
	if d.Kind != w.kind || d.Blocks() != w.block || d.Remove != w.remove || (d.Next != nil) != w.written || d.ConsultAdvisor != w.consult {
		t.Fatalf("decision kind=%q block=%v remove=%v written=%v consult=%v (%s); want %+v", d.Kind, d.Blocks(), d.Remove, d.Next != nil, d.ConsultAdvisor, d.Reason, w)
	}
	if w.block && d.Output.Reason != w.reason {
		t.Errorf("block reason = %q, want %q", d.Output.Reason, w.reason)
	}
	if w.sys != "" && (d.Output == nil || !strings.Contains(d.Output.SystemMessage, w.sys)) {
		t.Errorf("systemMessage = %+v, want it to mention %q", d.Output, w.sys)
	}
	if w.kind != "" && d.Output != nil && d.Output.SystemMessage == "" && d.Output.Decision == "" {
		t.Errorf("an owner decision printed an empty object")
	}
	if d.Next == nil {
		return
	}
	if d.Next.Status != w.status || d.Next.Loop.Iteration != w.iteration || d.Next.StopHookBlocks != w.blocks {
		t.Errorf("next marker status=%s iteration=%d blocks=%d; want %s %d %d", d.Next.Status, d.Next.Loop.Iteration, d.Next.StopHookBlocks, w.status, w.iteration, w.blocks)
	}
	if d.Next.LastDecision == nil || d.Next.LastDecision.Decision != w.kind {
		t.Errorf("lastDecision = %+v, want %s", d.Next.LastDecision, w.kind)
	}
}

func TestDecideLoopRecordsResponseLengthAndFingerprint(t *testing.T) {
	m := loopMarker(withStrategy("auto"), func(m *marker.Marker) { m.Loop.LastResponseLength = 900 })
	d := Decide(loopIn("short"), m, nil, loopEnv(func(e *Env) { e.Loop.GitFingerprint = "g1:ccc" }), loopNow)
	if d.Next == nil || d.Next.Loop.LastResponseLength != 5 || d.Next.Loop.GitFingerprint != "g1:ccc" {
		t.Fatalf("next loop = %+v", d.Next.Loop)
	}
	if d.Next.Loop.NoProgressIterations != 0 {
		t.Errorf("a git change must reset the no-progress count, got %d", d.Next.Loop.NoProgressIterations)
	}
	d = Decide(loopIn("short"), loopMarker(), nil, loopEnv(func(e *Env) { e.Loop.GitFingerprint = "" }), loopNow)
	if d.Next.Loop.GitFingerprint != "g1:aaa" || d.Next.Loop.NoProgressIterations != 1 {
		t.Errorf("unknown fingerprint: kept %q, no-progress %d", d.Next.Loop.GitFingerprint, d.Next.Loop.NoProgressIterations)
	}
}

func TestDecideLoopPauseThenResumeContinues(t *testing.T) {
	d := Decide(loopIn("STORY_AUTOMATOR_PAUSE"), loopMarker(), nil, loopEnv(), loopNow)
	if d.Kind != KindPaused || d.Next.Status != marker.StatusPaused || d.Next.PauseReason == "" {
		t.Fatalf("pause: %+v", d)
	}
	if again := Decide(loopIn("still here"), d.Next, nil, loopEnv(), loopNow); again.Kind != "" || again.Next != nil {
		t.Fatalf("a paused loop must not decide: %+v", again)
	}
	resumed := d.Next.Clone()
	resumed.Status, resumed.PauseReason, resumed.StopHookBlocks = marker.StatusActive, "", 0
	d = Decide(loopIn("back at it"), resumed, nil, loopEnv(), loopNow)
	if d.Kind != KindContinue || !d.Blocks() || d.Next.Loop.Iteration != 3 {
		t.Fatalf("after resume: kind %s block %v iteration %d", d.Kind, d.Blocks(), d.Next.Loop.Iteration)
	}
}

func TestDecideLoopNoticeNamesTheWayOut(t *testing.T) {
	d := Decide(loopIn("x"), loopMarker(), nil, loopEnv(), loopNow)
	for _, want := range []string{"<promise>ALL TESTS GREEN</promise>", "STORY_AUTOMATOR_PAUSE", "loop cancel"} {
		if !strings.Contains(d.Output.SystemMessage, want) {
			t.Errorf("systemMessage %q lacks %q", d.Output.SystemMessage, want)
		}
	}
	d = Decide(loopIn("x"), loopMarker(func(m *marker.Marker) { m.Loop.CompletionPromise = "" }), nil, loopEnv(), loopNow)
	if !strings.Contains(d.Output.SystemMessage, "STORY_AUTOMATOR_COMPLETE") {
		t.Errorf("without a promise the notice must name the complete line: %q", d.Output.SystemMessage)
	}
}
