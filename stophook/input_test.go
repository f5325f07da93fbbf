package stophook

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/marker"
)

// Gemini CLI's AfterAgent input carries prompt_response and a stop_hook_active
// that stays false: the message is read from it, and the breaker still counts.
func TestGeminiAfterAgentInput(t *testing.T) {
	in, err := DecodeInput([]byte(`{"session_id":"owner","hook_event_name":"AfterAgent","stop_hook_active":false,"prompt_response":"done\nSTORY_AUTOMATOR_COMPLETE"}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.LastMessage() != "done\nSTORY_AUTOMATOR_COMPLETE" || in.StopHookActive != nil {
		t.Fatalf("input %+v", in)
	}
	m := active()
	for i := 1; i <= 3; i++ {
		d := Decide(in, m, nil, env(), t0.Add(time.Duration(i)*time.Second))
		m = d.Next
	}
	if m.StopHookBlocks < 2 {
		t.Fatalf("blocks after three AfterAgent stops without progress = %d: the breaker does not hold", m.StopHookBlocks)
	}
}

// Real AfterAgent inputs of Gemini CLI 0.61 (testdata), from `gemini -p`
// whose hook blocked once: the turn, then the turn the block caused, whose
// prompt_response holds both answers and whose stop_hook_active is true.
func TestRealGeminiAfterAgentInputs(t *testing.T) {
	data, err := os.ReadFile("testdata/gemini-0.61.0-afteragent.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d inputs", len(lines))
	}
	answer := "Understood. (model-sim has no work scripted for this prompt.)"
	for i, want := range []string{answer, answer + "\n" + answer} {
		in, err := DecodeInput([]byte(lines[i]))
		if err != nil || in.HookEventName != HookAfterAgent || in.SessionID == "" || in.LastMessage() != want {
			t.Fatalf("input %d: %+v %v", i, in, err)
		}
		// Taken as absent either way, so the breaker counts every block.
		if in.StopHookActive != nil {
			t.Fatalf("input %d: stop_hook_active read as %v", i, *in.StopHookActive)
		}
	}
}

// A real agentStop input of Copilot CLI 1.0.102 (testdata) names the
// session's event log as transcriptPath, which the hook records as the
// child's transcript (where its usage is read), and its sessionId, which
// the hook matches against a marker's owner.
func TestRealCopilotAgentStopInputNamesItsEventLog(t *testing.T) {
	data, err := os.ReadFile("testdata/copilot-1.0.102-agentstop.json")
	if err != nil {
		t.Fatal(err)
	}
	in, err := DecodeInput(data)
	if err != nil || !strings.HasSuffix(in.TranscriptPath, "/session-state/fa91b57e-52e6-4b08-9b6a-3cc9f6966a19/events.jsonl") ||
		in.SessionID != "fa91b57e-52e6-4b08-9b6a-3cc9f6966a19" {
		t.Fatalf("%+v %v", in, err)
	}
}

// Copilot CLI names each stop by its session and time, the same in every
// hook it runs for it; other CLIs' inputs name none (Gemini CLI's string
// timestamp is no such name).
func TestOnlyCopilotsInputNamesItsStop(t *testing.T) {
	data, err := os.ReadFile("testdata/copilot-1.0.102-agentstop.json")
	if err != nil {
		t.Fatal(err)
	}
	in, err := DecodeInput(data)
	if err != nil || in.TurnKey() != "fa91b57e-52e6-4b08-9b6a-3cc9f6966a19@1795918654729" {
		t.Fatalf("copilot: %q %v", in.TurnKey(), err)
	}
	for _, raw := range []string{`{"session_id":"s","turn_id":"t"}`, `{"sessionId":"s","timestamp":"2026-11-25T07:02:41.824Z"}`, `{"sessionId":"s"}`} {
		if in, err := DecodeInput([]byte(raw)); err != nil || in.TurnKey() != "" {
			t.Errorf("%s: %q %v", raw, in.TurnKey(), err)
		}
	}
}

// Copilot CLI 1.0.102 runs agentStop at the end of a subagent's turn too
// (its task tool's), with the subagent's id and its parent's (a real input,
// testdata): that is no end of the child's turn, so the hook stamps no
// child done, and it never holds an owner's session.
func TestCopilotSubagentsAgentStopIsNoStopOfTheSession(t *testing.T) {
	data, err := os.ReadFile("testdata/copilot-1.0.102-subagent-agentstop.json")
	if err != nil {
		t.Fatal(err)
	}
	in, err := DecodeInput(data)
	if err != nil || !in.subagentStop() {
		t.Fatalf("%+v %v: want a subagent's stop", in, err)
	}
	now := t0
	if d := Decide(in, nil, nil, Env{Child: true, ChildSession: "sa-x-1"}, now); d.StampChild {
		t.Errorf("a child's subagent stop stamped the child: %+v", d)
	}
	m := active(func(m *marker.Marker) { m.OwnerSession = in.SessionID })
	if d := Decide(in, m, nil, Env{}, now); d.Reason != "subagent stop" {
		t.Errorf("an owner's subagent stop: %+v, want it let through as a subagent stop", d)
	}
	in.ParentAgentID = ""
	if d := Decide(in, nil, nil, Env{Child: true, ChildSession: "sa-x-1"}, now); !d.StampChild {
		t.Errorf("the session's own stop did not stamp the child: %+v", d)
	}
}
