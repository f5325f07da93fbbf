package cliio

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type codedErr struct{ fields map[string]any }

func (codedErr) Error() string                 { return "no loop here" }
func (codedErr) ErrorCode() string             { return "loop_not_found" }
func (codedErr) ExitStatus() int               { return 1 }
func (codedErr) ErrorHint() string             { return "start one" }
func (e codedErr) ErrorFields() map[string]any { return e.fields }

// A domain error, even wrapped, becomes the Failure its code, message, hint,
// exit status and fields say; any other error is not one.
func TestFromCodedMapsADomainError(t *testing.T) {
	err := fmt.Errorf("update: %w", codedErr{fields: map[string]any{"file": "x"}})
	f, ok := FromCoded(err)
	if !ok || f.Code != "loop_not_found" || f.Message != "no loop here" || f.Action != "start one" || f.Exit != 1 || f.Fields["file"] != "x" {
		t.Fatalf("%v %+v", ok, f)
	}
	if _, ok := FromCoded(errors.New("plain")); ok {
		t.Fatal("a plain error was mapped")
	}
	if _, ok := FromCoded(nil); ok {
		t.Fatal("nil was mapped")
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
