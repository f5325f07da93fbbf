package cliio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/internal/coded"
)

// A coded error anywhere in the chain prints its own code, message, action
// and fields, and ends the process with its own status; anything else is
// internal_error.
func TestExitCodeFindsACodedErrorInTheChain(t *testing.T) {
	for _, tc := range []struct {
		err        error
		code, msg  string
		exit       int
		action     string
		extraField string
	}{
		{fmt.Errorf("update: %w", coded.Fail("loop_not_found", "no loop here").WithAction("start one")), "loop_not_found", "no loop here", 1, "start one", ""},
		{fmt.Errorf("a: %w", fmt.Errorf("b: %w", &coded.Error{Code: "usage_error", Message: "bad", Exit: 2, Fields: map[string]any{"file": "x"}})), "usage_error", "bad", 2, "", "file"},
		{errors.New("plain"), "internal_error", "plain", 1, "", ""},
		{&coded.Error{Code: "no_status", Message: "m"}, "no_status", "m", 1, "", ""},
	} {
		var out, errOut bytes.Buffer
		got := ExitCode(&Streams{Out: &out, Err: &errOut}, tc.err)
		var printed map[string]any
		if err := json.Unmarshal(out.Bytes(), &printed); err != nil {
			t.Fatalf("%v: stdout %q: %v", tc.err, out.String(), err)
		}
		if got != tc.exit || printed["ok"] != false || printed["error"] != tc.code || printed["message"] != tc.msg {
			t.Errorf("%v: exit %d, printed %v", tc.err, got, printed)
		}
		if a, _ := printed["action"].(string); a != tc.action {
			t.Errorf("%v: action %q, want %q", tc.err, a, tc.action)
		}
		if tc.extraField != "" && printed[tc.extraField] == nil {
			t.Errorf("%v: no field %s in %v", tc.err, tc.extraField, printed)
		}
	}
}

// --json asks for JSON however the flag parser would take it as true.
func TestWantsJSONReadsTheFlagAsTheParserDoes(t *testing.T) {
	for args, want := range map[string]bool{
		"status --json": true, "status -json": true, "status --json=true": true, "status --json=t": true,
		"status -json=1": true, "status --json=TRUE": true, "status --json=false": false, "status --json=0": false,
		"status": false, "loop start -- --json": false, "status --jsonish": false, "json": false,
	} {
		if got := WantsJSON(strings.Fields(args)); got != want {
			t.Errorf("%q: %v, want %v", args, got, want)
		}
	}
}
