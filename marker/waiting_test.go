package marker

import "testing"

func TestMarkerWaitingRoundTrips(t *testing.T) {
	m := &Marker{Version: 1, Mode: ModeStory, Status: StatusActive, StoriesRemaining: 2,
		Waiting: &Waiting{Reason: "usage_limit", Agent: "claude", ResetsAt: "2026-11-22T14:00:00Z", ResumesAt: "2026-11-22T14:00:10Z"}}
	data, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data)
	if err != nil || back.Waiting == nil || *back.Waiting != *m.Waiting || back.Extra != nil {
		t.Fatalf("decoded %+v (%v)", back, err)
	}
	c := back.Clone()
	c.Waiting.Agent = "codex"
	if back.Waiting.Agent != "claude" {
		t.Fatal("Clone shares the wait")
	}
	// Older markers, without the field, read as not waiting.
	old, err := Decode([]byte(`{"version":1,"mode":"story","status":"active","storiesRemaining":1}`))
	if err != nil || old.Waiting != nil {
		t.Fatalf("old marker %+v %v", old, err)
	}
}
