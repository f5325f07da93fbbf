package stophook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// inputStrings are the hook input's string fields, by their JSON names.
var inputStrings = map[string]func(Input) string{
	"session_id":      func(in Input) string { return in.SessionID },
	"transcript_path": func(in Input) string { return in.TranscriptPath },
	"cwd":             func(in Input) string { return in.Cwd },
	"hook_event_name": func(in Input) string { return in.HookEventName },
	"turn_id":         func(in Input) string { return in.TurnID },
}

// FuzzDecodeInputAgainstGenericJSON checks DecodeInput against a plain
// map decode as the reference: an object the reference reads with the right
// field types is accepted, every string field carries the reference's value,
// and the last message is the reference's last_assistant_message, or Gemini's
// prompt_response when that is absent.
func FuzzDecodeInputAgainstGenericJSON(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"a","stop_hook_active":true,"last_assistant_message":"done"}`,
		`{"hook_event_name":"AfterAgent","prompt_response":"ok","stop_hook_active":false}`,
		`{"turn_id":"t1","cwd":"/p","transcript_path":"/t.jsonl"}`,
		`{"session_id":1}`, `{"session_id":"a","session_id":"b"}`, ` {"cwd":"\u00e9"} `,
		`{"background_tasks":[1,2]}`, `{}`, `{"last_assistant_message":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var ref map[string]any
		refErr := json.Unmarshal(data, &ref)
		if refErr == nil && ref != nil && foldedKey(ref) {
			return // encoding/json matches keys without case; the reference does not
		}
		in, err := DecodeInput(data)
		if refErr != nil || ref == nil || !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			if err == nil {
				t.Fatalf("accepted what is not a JSON object: %q", data)
			}
			return
		}
		if !typesFit(ref) {
			if err == nil {
				t.Fatalf("accepted fields of the wrong type: %q", data)
			}
			return
		}
		if err != nil {
			t.Fatalf("refused a well-typed object %q: %v", data, err)
		}
		for name, get := range inputStrings {
			want, _ := ref[name].(string)
			if got := get(in); got != want {
				t.Fatalf("%s = %q, the reference reads %q (input %q)", name, got, want, data)
			}
		}
		want, has := ref["last_assistant_message"].(string)
		if !has {
			want, has = ref["prompt_response"].(string)
		}
		if got := in.LastAssistantMessage; has != (got != nil) || has && *got != want {
			t.Fatalf("last message %v, the reference reads %q (%v) in %q", got, want, has, data)
		}
	})
}

// typesFit reports whether every known field has the type Input gives it.
func typesFit(ref map[string]any) bool {
	for name := range inputStrings {
		if v, ok := ref[name]; ok && v != nil {
			if _, isString := v.(string); !isString {
				return false
			}
		}
	}
	for _, name := range []string{"last_assistant_message", "prompt_response"} {
		if v, ok := ref[name]; ok && v != nil {
			if _, isString := v.(string); !isString {
				return false
			}
		}
	}
	if v, ok := ref["stop_hook_active"]; ok && v != nil {
		if _, isBool := v.(bool); !isBool {
			return false
		}
	}
	return true
}

// foldedKey reports whether a key differs from a known field name only in case.
func foldedKey(ref map[string]any) bool {
	known := []string{"session_id", "stop_hook_active", "last_assistant_message", "transcript_path",
		"cwd", "hook_event_name", "background_tasks", "prompt_response", "turn_id"}
	for k := range ref {
		for _, n := range known {
			if k != n && strings.EqualFold(k, n) {
				return true
			}
		}
	}
	return false
}
