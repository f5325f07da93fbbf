package stophook

import (
	"testing"
	"time"
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
