package modelsim

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
)

// Anthropic Messages (Claude Code): POST /v1/messages, streaming SSE.

type antRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Stream       bool `json:"stream"`
	OutputFormat *struct {
		Schema map[string]any `json:"schema"`
	} `json:"output_format"`
}

type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     map[string]any  `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// antBlocks reads content that is either a string or a list of blocks.
func antBlocks(raw json.RawMessage) []antBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []antBlock{{Type: "text", Text: s}}
	}
	var out []antBlock
	_ = json.Unmarshal(raw, &out)
	return out
}

func antText(raw json.RawMessage) string {
	var parts []string
	for _, b := range antBlocks(raw) {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// anthropicConversation normalises a request. A user message that carries
// tool results is the tools' answer, not a new user turn, even when Claude
// Code adds reminders to it.
func anthropicConversation(req *antRequest) *Conversation {
	c := &Conversation{Protocol: ProtocolAnthropic, Model: req.Model, System: antText(req.System)}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, t.Name)
	}
	for _, m := range req.Messages {
		blocks := antBlocks(m.Content)
		switch m.Role {
		case "assistant":
			msg := Message{Role: RoleAssistant}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					msg.Text += b.Text
				case "tool_use":
					msg.Calls = append(msg.Calls, ToolCall{ID: b.ID, Name: b.Name, Args: b.Input})
				}
			}
			c.Messages = append(c.Messages, msg)
		case "user":
			var results []Message
			for _, b := range blocks {
				if b.Type == "tool_result" {
					results = append(results, Message{Role: RoleTool, Result: antText(b.Content)})
				}
			}
			if results != nil {
				c.Messages = append(c.Messages, results...)
				continue
			}
			c.Messages = append(c.Messages, Message{Role: RoleUser, Text: userText(blocks)})
		}
	}
	// Claude Code's side calls (titles, summaries) offer no tools.
	c.Side = len(c.Tools) == 0
	if req.OutputFormat != nil && req.OutputFormat.Schema != nil {
		c.Side, c.Schema = true, req.OutputFormat.Schema
	}
	return c
}

// userText joins a user message's text blocks, leaving out Claude Code's
// <system-reminder> blocks, which are not what the user said — except a
// background task's <task-notification>, an event the model acts on (it is
// what wakes an idle session when its background command ends).
func userText(blocks []antBlock) string {
	var parts []string
	for _, b := range blocks {
		t := strings.TrimSpace(b.Text)
		if b.Type == "text" && (!strings.HasPrefix(t, "<system-reminder>") || strings.Contains(t, "<task-notification>")) {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request, body []byte) {
	var req antRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSONBody(w, 400, antError("invalid_request_error", "model-sim: "+err.Error()))
		return
	}
	conv := anthropicConversation(&req)
	if s.limitFault(w, r, body, ProtocolAnthropic, req.Model, conv.Side) {
		return
	}
	rep := s.brain.Respond(conv)
	content := s.anthropicContent(conv, rep)
	if !s.answer(r, body, ProtocolAnthropic, req.Model, conv, rep, rep.Usage) {
		return
	}
	if rep.ErrorStatus != 0 {
		writeJSONBody(w, rep.ErrorStatus, antError("api_error", "model-sim: scripted error"))
		return
	}
	stop := "end_turn"
	if rep.Call != nil {
		stop = "tool_use"
	}
	msgID := s.newID("msg_")
	if !req.Stream {
		writeJSONBody(w, 200, map[string]any{"id": msgID, "type": "message", "role": "assistant",
			"model": req.Model, "content": content, "stop_reason": stop, "stop_sequence": nil, "usage": antUsage(rep.Usage, true)})
		return
	}
	e := newSSE(w)
	start := antUsage(rep.Usage, false)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message",
		"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start}})
	for i, b := range content {
		streamAntBlock(e, i, b)
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": antUsage(rep.Usage, true)})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicContent is the reply as content blocks: text, then one tool_use
// on the CLI's own tool.
func (s *Server) anthropicContent(c *Conversation, rep Reply) []map[string]any {
	var out []map[string]any
	if rep.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": rep.Text})
	}
	if rep.Call != nil {
		name, input := "Bash", map[string]any{"command": rep.Call.shellCommand(), "description": "Run a command"}
		if rep.Call.Background {
			input["run_in_background"] = true
		}
		if rep.Call.Unsandboxed {
			// Claude Code's Bash escape hatch.
			input["dangerouslyDisableSandbox"] = true
		}
		if rep.Call.Shell == "" && filepath.IsAbs(rep.Call.WritePath) && c.HasTool("Write") {
			name, input = "Write", map[string]any{"file_path": rep.Call.WritePath, "content": rep.Call.WriteContent}
		}
		if rep.Call.Shell == "" && filepath.IsAbs(rep.Call.ReadPath) && c.HasTool("Read") {
			name, input = "Read", map[string]any{"file_path": rep.Call.ReadPath}
		}
		if rep.Call.Skill != "" {
			// OpenCode's skill tool takes the skill's name.
			name, input = SkillToolNamed, map[string]any{"name": rep.Call.Skill}
		}
		switch tool := subagentTool(c); {
		case rep.Call.Subagent != "" && tool == TaskTool:
			// OpenCode's task tool: its general agent; the call returns
			// the subagent's last message.
			name, input = tool, map[string]any{"description": "model-sim subagent",
				"prompt": rep.Call.Subagent, "subagent_type": "general"}
		case rep.Call.Subagent != "":
			// Claude Code's Agent tool (Task before 2.1). 2.1 runs an agent in
			// the background unless told not to; run_in_background false
			// makes the call wait for the subagent's answer.
			name, input = tool, map[string]any{"description": "model-sim subagent",
				"prompt": rep.Call.Subagent, "subagent_type": "general-purpose", "run_in_background": false}
		}
		out = append(out, map[string]any{"type": "tool_use", "id": s.newID("toolu_"), "name": name, "input": input})
	}
	if out == nil {
		out = append(out, map[string]any{"type": "text", "text": ""})
	}
	return out
}

// streamAntBlock streams one block: start (empty), one delta, stop.
func streamAntBlock(e *sse, i int, b map[string]any) {
	switch b["type"] {
	case "tool_use":
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
		args := marshal(b["input"])
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
	default:
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
			"content_block": map[string]any{"type": "text", "text": ""}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
			"delta": map[string]any{"type": "text_delta", "text": b["text"]}})
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

// antUsage is the Messages API's usage: input_tokens excludes the cached
// parts, which have their own fields. message_start carries the input side
// (output so far 0); the final usage carries all four.
func antUsage(u Usage, final bool) map[string]any {
	out := 0
	if final {
		out = u.OutputTokens
	}
	return map[string]any{"input_tokens": u.InputTokens, "output_tokens": out,
		"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheWriteTokens}
}

func antError(kind, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}}
}

// anthropicCountTokens answers count_tokens: a count, no usage spent.
func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request, body []byte) {
	var req antRequest
	_ = json.Unmarshal(body, &req)
	s.add(Exchange{Protocol: ProtocolAnthropic, Method: r.Method, Path: r.RequestURI, Model: req.Model,
		Side: true, Status: 200, Request: rawOrNil(body)})
	writeJSONBody(w, 200, map[string]any{"input_tokens": len(body) / 4})
}
