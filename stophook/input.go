// Package stophook decides whether an agent session may stop: a pure Decide over
// (hook input, marker, environment, clock) and a thin shell that does the I/O.
package stophook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxInputBytes bounds what the hook reads from stdin; Claude Code passes the
// transcript by path, so real inputs are far smaller.
const MaxInputBytes = 4 << 20

// ErrInputTooLarge is returned when stdin holds more than MaxInputBytes.
var ErrInputTooLarge = errors.New("hook input too large")

// Input is the JSON a Claude Code (or Codex) Stop hook receives on stdin.
type Input struct {
	SessionID            string          `json:"session_id"`
	StopHookActive       *bool           `json:"stop_hook_active"`
	LastAssistantMessage *string         `json:"last_assistant_message"`
	TranscriptPath       string          `json:"transcript_path"`
	Cwd                  string          `json:"cwd"`
	HookEventName        string          `json:"hook_event_name"`
	BackgroundTasks      json.RawMessage `json:"background_tasks"`
	// PromptResponse is Gemini CLI's AfterAgent name for the last answer.
	PromptResponse *string `json:"prompt_response"`
	// Error is the API error a turn ended in (Claude Code's StopFailure:
	// "rate_limit", "overloaded", …).
	Error string `json:"error"`
	// TurnID is sent by Codex (not by Claude Code or Gemini CLI).
	TurnID string `json:"turn_id"`
	// TranscriptPathCamel and SessionIDCamel are Copilot CLI's names for
	// transcript_path (its agentStop hook's, the session's events.jsonl)
	// and session_id.
	TranscriptPathCamel string `json:"transcriptPath"`
	SessionIDCamel      string `json:"sessionId"`
	// ParentAgentID is set in Copilot CLI 1.0.102's agentStop when a
	// subagent's turn (its task tool's) ended, not the session's: measured,
	// with agentId and agentType beside it and the subagent's id as sessionId.
	ParentAgentID string `json:"parentAgentId"`
	// Timestamp is when Copilot CLI's turn stopped (epoch milliseconds,
	// the same in every hook it runs for that stop); Gemini CLI sends a
	// string there.
	Timestamp json.RawMessage `json:"timestamp"`
}

// TurnKey names the stop, when the input tells: Copilot CLI's session and
// stop time; "" = it does not.
func (in Input) TurnKey() string {
	ms := string(in.Timestamp)
	if in.SessionIDCamel == "" || ms == "" || strings.Trim(ms, "0123456789") != "" {
		return ""
	}
	return in.SessionIDCamel + "@" + ms
}

// subagentStop reports whether the stop is a subagent's: Claude Code's
// SubagentStop event, or a stop that names its parent agent.
func (in Input) subagentStop() bool {
	return in.HookEventName == hookEventSubag || in.ParentAgentID != ""
}

// fromCodex reports whether the input is Codex's: the only one with a turn id.
func (in Input) fromCodex() bool { return in.TurnID != "" }

// HookAfterAgent is Gemini CLI's hook at the end of an agent turn, its Stop.
const HookAfterAgent = "AfterAgent"

// ReadInput reads at most MaxInputBytes from r and decodes them.
func ReadInput(r io.Reader) (Input, []byte, error) {
	data, err := ReadInputBytes(r)
	if err != nil {
		return Input{}, data, err
	}
	in, err := DecodeInput(data)
	return in, data, err
}

// ReadInputBytes reads the hook's input, undecoded, up to MaxInputBytes.
func ReadInputBytes(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
	if len(data) > MaxInputBytes {
		return nil, ErrInputTooLarge
	}
	return data, nil
}

// DecodeInput parses the hook's JSON. Empty input is an error: every real
// hook call carries an object, and the hook fails open on anything else.
func DecodeInput(data []byte) (Input, error) {
	var in Input
	// JSON's own white space only: anything else around the object is not JSON.
	trimmed := bytes.Trim(data, " \t\r\n")
	if len(trimmed) == 0 {
		return in, errors.New("empty hook input")
	}
	if trimmed[0] != '{' {
		return in, errors.New("hook input is not a JSON object")
	}
	if err := json.Unmarshal(trimmed, &in); err != nil {
		return Input{}, fmt.Errorf("decode hook input: %w", err)
	}
	if in.TranscriptPath == "" {
		in.TranscriptPath = in.TranscriptPathCamel
	}
	if in.SessionID == "" {
		in.SessionID = in.SessionIDCamel
	}
	if in.LastAssistantMessage == nil && in.PromptResponse != nil {
		in.LastAssistantMessage = in.PromptResponse
	}
	if in.HookEventName == HookAfterAgent {
		// Gemini CLI 0.61 sends stop_hook_active true on the turn a block
		// caused (testdata/gemini-0.61.0-afteragent.jsonl), but the breaker
		// must not depend on it: a false there would reset it on every
		// block. Treat it as absent (which counts as true).
		in.StopHookActive = nil
	}
	return in, nil
}

// LastMessage is the last assistant message, or "" when the field is absent.
func (in Input) LastMessage() string {
	if in.LastAssistantMessage == nil {
		return ""
	}
	return *in.LastAssistantMessage
}

// runningStates are background-task states that will wake the session later.
var runningStates = map[string]bool{"": true, "running": true, "in_progress": true, "pending": true, "started": true}

// HasRunningBackgroundTask reports whether background_tasks lists a task still
// running. Claude Code drops finished tasks from the list, so an entry without
// a status counts as running; an explicit finished status does not.
func (in Input) HasRunningBackgroundTask() bool {
	raw := bytes.TrimSpace(in.BackgroundTasks)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return false
	}
	var entries []json.RawMessage
	if raw[0] == '{' {
		var byID map[string]json.RawMessage
		if json.Unmarshal(raw, &byID) != nil {
			return false
		}
		for _, v := range byID {
			entries = append(entries, v)
		}
	} else if json.Unmarshal(raw, &entries) != nil {
		return false
	}
	for _, e := range entries {
		var t struct {
			Status string `json:"status"`
			State  string `json:"state"`
		}
		if json.Unmarshal(e, &t) != nil {
			// Not an object (a bare id or command): present means running.
			return true
		}
		s := t.Status
		if s == "" {
			s = t.State
		}
		if runningStates[strings.ToLower(s)] {
			return true
		}
	}
	return false
}
