package status

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/orchestrator"
)

// status says whether the run's children are confined, in text and JSON.
func TestStatusShowsTheRunsSandbox(t *testing.T) {
	st := &orchestrator.State{RunID: "run-x", Status: orchestrator.RunRunning,
		Config: orchestrator.RunConfig{Sandbox: orchestrator.SandboxOff}}
	r := RunOf(st, "/p/state.md")
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"sandbox":"off"`) {
		t.Fatalf("json %s", b)
	}
	var text bytes.Buffer
	WriteText(&text, View{Run: r}, time.Now())
	if !strings.Contains(text.String(), "Children: sandbox off (children unconfined)") {
		t.Fatalf("text:\n%s", text.String())
	}
	st.Config = orchestrator.RunConfig{Sandbox: orchestrator.SandboxOn, SandboxNetwork: []string{"registry.npmjs.org"}}
	if r := RunOf(st, ""); r.Sandbox != orchestrator.SandboxOn || len(r.SandboxNetwork) != 1 {
		t.Fatalf("a confined run reads %q %v", r.Sandbox, r.SandboxNetwork)
	}
	// A document from before the setting ran its children unconfined.
	st.Config = orchestrator.RunConfig{}
	if r := RunOf(st, ""); r.Sandbox != orchestrator.SandboxOff {
		t.Fatalf("an old run reads %q, want off", r.Sandbox)
	}
}
