package main

import (
	"encoding/json"
	"testing"
)

// stopJSON is a Stop hook input from session with message.
func stopJSON(session, message string) string {
	b, _ := json.Marshal(map[string]any{"session_id": session, "hook_event_name": "Stop", "stop_hook_active": true, "last_assistant_message": message})
	return string(b)
}

func TestLoopPauseThenResumeThroughTheHook(t *testing.T) {
	root := t.TempDir()
	loopRun(t, root, nil, "", "loop", "start", "keep going", "--owner-session", "o", "--max-iterations", "5")
	out, _ := loopRun(t, root, nil, stopJSON("o", "did a bit"), "stop-hook")
	if out["decision"] != "block" || out["reason"] != "keep going" {
		t.Fatalf("first stop: %v", out)
	}
	out, _ = loopRun(t, root, nil, stopJSON("o", "Need a decision from you.\nSTORY_AUTOMATOR_PAUSE"), "stop-hook")
	if out["decision"] != nil || loopMarkerOf(t, root).Status != "paused" {
		t.Fatalf("pause: %v", out)
	}
	if out, _ := loopRun(t, root, nil, stopJSON("o", "waiting"), "stop-hook"); out != nil {
		t.Fatalf("a paused loop must let the stop through silently: %v", out)
	}
	loopRun(t, root, nil, "", "loop", "resume")
	out, _ = loopRun(t, root, nil, stopJSON("o", "back"), "stop-hook")
	if out["decision"] != "block" || loopMarkerOf(t, root).Loop.Iteration != 3 {
		t.Fatalf("after resume: %v iteration %d", out, loopMarkerOf(t, root).Loop.Iteration)
	}
}

func TestLoopBystanderChangesNothing(t *testing.T) {
	root := t.TempDir()
	loopRun(t, root, nil, "", "loop", "start", "keep going", "--owner-session", "o")
	before, _ := json.Marshal(loopMarkerOf(t, root))
	if out, _ := loopRun(t, root, nil, stopJSON("intruder", "STORY_AUTOMATOR_COMPLETE"), "stop-hook"); out != nil {
		t.Fatalf("bystander output %v", out)
	}
	after, _ := json.Marshal(loopMarkerOf(t, root))
	if string(before) != string(after) {
		t.Fatalf("a bystander changed the loop:\n%s\n%s", before, after)
	}
}
