package stophook

import (
	"testing"
)

func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"a","stop_hook_active":true,"last_assistant_message":"done"}`,
		`{"hook_event_name":"SubagentStop"}`,
		`{"background_tasks":[{"status":"running"}]}`,
		`{"background_tasks":{"x":{"state":"pending"}}}`,
		``, `[]`, `{"stop_hook_active":"yes"}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInput(data)
		if err != nil {
			return
		}
		_ = in.HasRunningBackgroundTask()
		// Whatever the input, deciding against an owned marker must not panic
		// and a bystander must never be blocked.
		m := active()
		d := Decide(in, m, nil, env(), t0)
		if in.SessionID != m.OwnerSession && d.Output != nil {
			t.Fatalf("non-owner %q got output %+v", in.SessionID, d.Output)
		}
	})
}
