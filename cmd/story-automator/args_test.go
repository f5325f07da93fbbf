package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func runCLI(t *testing.T, root string, args ...string) (map[string]any, int) {
	t.Helper()
	var out bytes.Buffer
	code := Run(args, testStreams(root, &out))
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: stdout is not one JSON object: %q", args, out.String())
	}
	return res, code
}

func TestMarkerCommands(t *testing.T) {
	root := t.TempDir()
	res, code := runCLI(t, root, "marker", "show")
	if code != 0 || res["exists"] != false {
		t.Fatalf("show without marker: %d %v", code, res)
	}
	res, code = runCLI(t, root, "marker", "create", "--epic", "2", "--story", "2.1", "--remaining", "3", "--owner-session", "me", "--pid", "99")
	m := res["marker"].(map[string]any)
	if code != 0 || m["ownerSession"] != "me" || m["storiesRemaining"] != float64(3) || m["ownerPid"] != float64(99) || m["version"] != float64(1) {
		t.Fatalf("create: %d %v", code, res)
	}
	if res, code = runCLI(t, root, "marker", "create", "--remaining", "1"); code != 1 || res["error"] != "marker_exists" {
		t.Fatalf("second create: %d %v", code, res)
	}
	res, _ = runCLI(t, root, "marker", "heartbeat", "--story", "2.2", "--step", "review", "--remaining", "2")
	m = res["marker"].(map[string]any)
	if m["currentStory"] != "2.2" || m["currentStep"] != "review" || m["storiesRemaining"] != float64(2) {
		t.Fatalf("heartbeat: %v", res)
	}
	res, _ = runCLI(t, root, "marker", "pause", "--reason", "needs a human")
	if m = res["marker"].(map[string]any); m["status"] != "paused" || m["pauseReason"] != "needs a human" {
		t.Fatalf("pause: %v", res)
	}
	res, _ = runCLI(t, root, "marker", "resume")
	if m = res["marker"].(map[string]any); m["status"] != "active" {
		t.Fatalf("resume: %v", res)
	}
	res, _ = runCLI(t, root, "marker", "claim", "--owner-session", "new-owner")
	if m = res["marker"].(map[string]any); m["ownerSession"] != "new-owner" {
		t.Fatalf("claim: %v", res)
	}
	if res, code = runCLI(t, root, "marker", "claim"); code != 2 {
		t.Fatalf("claim without a session must be a usage error: %d %v", code, res)
	}
	if res, code = runCLI(t, root, "marker", "remove"); code != 0 || res["removed"] != true {
		t.Fatalf("remove: %d %v", code, res)
	}
	if res, code = runCLI(t, root, "marker", "heartbeat"); code != 1 || res["error"] != "marker_not_found" {
		t.Fatalf("heartbeat without marker: %d %v", code, res)
	}
}

func TestMarkerCreateWithNothingRemainingGuardsNothing(t *testing.T) {
	root := t.TempDir()
	if res, code := runCLI(t, root, "marker", "create", "--remaining", "0", "--owner-session", "o"); code != 0 || res["ok"] != true {
		t.Fatalf("create --remaining 0: %d %v", code, res)
	}
}

func TestMarkerCreateOwnerFromEnvironment(t *testing.T) {
	root := t.TempDir()
	var out bytes.Buffer
	s := testStreams(root, &out)
	s.Getenv = func(k string) string {
		if k == "CODEX_THREAD_ID" {
			return "codex-thread"
		}
		return ""
	}
	if code := Run([]string{"marker", "create", "--remaining", "1"}, s); code != 0 || !strings.Contains(out.String(), `"ownerSession":"codex-thread"`) {
		t.Fatalf("%d %s", code, out.String())
	}
}

func TestUsageErrorsExitTwoWithJSONAndStderr(t *testing.T) {
	for _, args := range [][]string{
		{"marker", "create", "--remaining", "many"},
		{"marker", "create", "--bogus"},
		{"marker", "create", "--epic", "1"},
		{"marker", "create", "--remaining", "-1"},
		{"marker", "heartbeat", "--remaining", "-3"},
		{"marker", "show", "extra"},
		{"marker", "nope"},
		{"nope"},
		{"--log-level", "loud", "marker", "show"},
	} {
		var out, errb bytes.Buffer
		s := testStreams(t.TempDir(), &out)
		s.Err = &errb
		code := Run(args, s)
		var res map[string]any
		if code != 2 || json.Unmarshal(out.Bytes(), &res) != nil || res["error"] != "usage_error" || errb.Len() == 0 {
			t.Errorf("%q: code %d stdout %q stderr %q", args, code, out.String(), errb.String())
		}
	}
}
