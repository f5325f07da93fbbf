package modelsim

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// OpenAI Responses (Codex): POST /v1/responses, streaming SSE.

type oaiRequest struct {
	Model        string          `json:"model"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
	Tools        []oaiTool       `json:"tools"`
	Stream       bool            `json:"stream"`
	Text         *struct {
		Format *struct {
			Type   string         `json:"type"`
			Schema map[string]any `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

type oaiItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Input     string          `json:"input"`
	Tools     []oaiTool       `json:"tools"`
}

// oaiTool is an offered tool; a namespace holds more tools.
type oaiTool struct {
	Type  string    `json:"type"`
	Name  string    `json:"name"`
	Tools []oaiTool `json:"tools"`
}

// toolNames flattens tools and namespaces into tool names.
func toolNames(tools []oaiTool) []string {
	var out []string
	for _, t := range tools {
		switch {
		case t.Type == "namespace":
			out = append(out, toolNames(t.Tools)...)
		case t.Name != "":
			out = append(out, t.Name)
		default:
			out = append(out, t.Type)
		}
	}
	return out
}

// toolNamespaces maps each tool offered in a namespace to its namespace.
func toolNamespaces(tools []oaiTool, into map[string]string) {
	for _, t := range tools {
		if t.Type == "namespace" {
			for _, n := range toolNames(t.Tools) {
				into[n] = t.Name
			}
		}
	}
}

// oaiText reads content or output that is a string or a list of parts.
func oaiText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// codexContext marks the user messages Codex adds on its own (environment,
// instructions from AGENTS.md, permissions): context, not what the user said.
func codexContext(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range []string{"<environment_context>", "<user_instructions>", "<permissions", "# AGENTS.md", "<turn_aborted>", "<skills_instructions>"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// loadedSkill marks the user message in which GitHub Copilot CLI 1.0.102
// hands over a skill its skill tool loaded: <skill-context name="…">, its
// folder ("Base directory for this skill: …") and SKILL.md's body.
func loadedSkill(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "<skill-context ")
}

// hookPrompt is how Codex hands a Stop hook's block reason to the model: a
// user message <hook_prompt hook_run_id="…">REASON</hook_prompt>, with the
// reason HTML-escaped.
var hookPrompt = lazyre.New(`(?s)^\s*<hook_prompt\b[^>]*>(.*)</hook_prompt>\s*$`)

// unwrapHookPrompt reads a hook prompt as the reason it carries, unescaped,
// the way a model reads it; other text is returned as is.
func unwrapHookPrompt(text string) string {
	if m := hookPrompt().FindStringSubmatch(text); m != nil {
		return html.UnescapeString(m[1])
	}
	return text
}

func openaiConversation(req *oaiRequest) *Conversation {
	c := &Conversation{Protocol: ProtocolOpenAI, Model: req.Model, System: req.Instructions}
	c.Tools, c.Namespaces = toolNames(req.Tools), map[string]string{}
	toolNamespaces(req.Tools, c.Namespaces)
	var items []oaiItem
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		items = []oaiItem{{Type: "message", Role: "user", Content: req.Input}}
	} else {
		_ = json.Unmarshal(req.Input, &items)
	}
	for _, it := range items {
		switch it.Type {
		case "additional_tools":
			// Codex 0.169 offers its tools in the input, not in "tools".
			c.Tools = append(c.Tools, toolNames(it.Tools)...)
			toolNamespaces(it.Tools, c.Namespaces)
		case "message", "":
			text := oaiText(it.Content)
			switch it.Role {
			case "user":
				if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == RoleTool && loadedSkill(text) {
					// GitHub Copilot CLI's skill tool answers "loaded" and
					// hands the skill's text over as a user message right
					// after: the model reads it as that call's result.
					c.Messages[n-1].Result += "\n" + text
					continue
				}
				if !codexContext(text) {
					c.Messages = append(c.Messages, Message{Role: RoleUser, Text: unwrapHookPrompt(text)})
				}
			case "assistant":
				c.Messages = append(c.Messages, Message{Role: RoleAssistant, Text: text})
			}
		case "function_call", "custom_tool_call", "local_shell_call":
			var args map[string]any
			_ = json.Unmarshal([]byte(it.Arguments), &args)
			if it.Type == "custom_tool_call" {
				args = map[string]any{"input": it.Input}
			}
			c.Messages = append(c.Messages, Message{Role: RoleAssistant,
				Calls: []ToolCall{{ID: it.CallID, Name: it.Name, Args: args}}})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			c.Messages = append(c.Messages, Message{Role: RoleTool, Result: oaiText(it.Output)})
		case "agent_message":
			c.agentMessage(agentMessageText(it.Content))
		}
	}
	c.Side = len(c.Tools) == 0
	if req.Text != nil && req.Text.Format != nil && req.Text.Format.Schema != nil {
		c.Side, c.Schema = true, req.Text.Format.Schema
	}
	return c
}

// agentMessageText is a Codex agent message as its recipient's model reads
// it: the header's lines, then the payload, which Codex carries as
// encrypted content (what the sender wrote, as model-sim has it).
func agentMessageText(raw json.RawMessage) string {
	var parts []struct {
		Text      string `json:"text"`
		Encrypted string `json:"encrypted_content"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text + p.Encrypted)
	}
	return b.String()
}

// agentMessage reads a Codex agent message (another agent of the session's
// team writing to this one): a task sent to a subagent is its user turn
// (the payload alone); a subagent's final answer after the parent's
// wait_agent is read with that wait's result, as the parent's model reads
// it on in the same turn.
func (c *Conversation) agentMessage(text string) {
	header, payload, _ := strings.Cut(text, "Payload:\n")
	if strings.Contains(header, "Message Type: NEW_TASK") {
		c.Messages = append(c.Messages, Message{Role: RoleUser, Text: payload})
		return
	}
	if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == RoleTool {
		c.Messages[n-1].Result += "\n" + text
		return
	}
	c.Messages = append(c.Messages, Message{Role: RoleUser, Text: text})
}

func (s *Server) openaiResponses(w http.ResponseWriter, r *http.Request, body []byte) {
	var req oaiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSONBody(w, 400, oaiError("invalid_request_error", "model-sim: "+err.Error()))
		return
	}
	conv := openaiConversation(&req)
	if s.limitFault(w, r, body, ProtocolOpenAI, req.Model, conv.Side) {
		return
	}
	rep := s.brain.Respond(conv)
	usage := Usage{InputTokens: rep.Usage.InputTokens + rep.Usage.CacheWriteTokens,
		OutputTokens: rep.Usage.OutputTokens, CacheReadTokens: rep.Usage.CacheReadTokens}
	if !s.answer(r, body, ProtocolOpenAI, req.Model, conv, rep, usage) {
		return
	}
	if rep.ErrorStatus != 0 {
		writeJSONBody(w, rep.ErrorStatus, oaiError("server_error", "model-sim: scripted error"))
		return
	}
	output := s.openaiOutput(conv, rep)
	resp := map[string]any{"id": s.newID("resp_"), "object": "response", "created_at": createdAt,
		"status": "completed", "model": req.Model, "output": output, "usage": oaiUsage(usage)}
	if !req.Stream {
		writeJSONBody(w, 200, resp)
		return
	}
	e := newSSE(w)
	pending := map[string]any{}
	for k, v := range resp {
		pending[k] = v
	}
	pending["status"], pending["output"], pending["usage"] = "in_progress", []any{}, nil
	e.event("response.created", map[string]any{"type": "response.created", "response": pending})
	e.event("response.in_progress", map[string]any{"type": "response.in_progress", "response": pending})
	for i, item := range output {
		streamOAIItem(e, i, item)
	}
	e.event("response.completed", map[string]any{"type": "response.completed", "response": resp})
}

// openaiOutput is the reply as output items: a message, then one function
// call on the CLI's shell tool (Codex's, or GitHub Copilot CLI's "bash"),
// or its skill or subagent tool.
func (s *Server) openaiOutput(c *Conversation, rep Reply) []map[string]any {
	var out []map[string]any
	if rep.Text != "" || rep.Call == nil {
		out = append(out, map[string]any{"id": s.newID("msg_"), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	if rep.Call == nil {
		return out
	}
	cmd := rep.Call.shellCommand()
	switch {
	case rep.Call.Skill != "":
		// GitHub Copilot CLI's skill tool takes the skill's name.
		out = append(out, s.oaiFunctionCall(SkillToolNamed, map[string]any{"skill": rep.Call.Skill}))
	case rep.Call.Subagent != "" && subagentTool(c) == TaskTool:
		// GitHub Copilot CLI's task tool; mode "sync" waits for the
		// subagent and returns its result ("background" returns at once).
		out = append(out, s.oaiFunctionCall(TaskTool, map[string]any{"name": "model-sim-review",
			"description": "model-sim subagent", "prompt": rep.Call.Subagent, "agent_type": "general-purpose", "mode": "sync"}))
	case rep.Call.Subagent != "":
		// Codex's launch: a fresh subagent (no parent history) with the
		// prompt as its task; it returns at once.
		out = append(out, s.oaiNamespacedCall(c, codexSpawn, map[string]any{"task_name": "model_sim_subagent",
			"message": rep.Call.Subagent, "fork_turns": "none"}))
	case rep.Call.WaitAgent:
		out = append(out, s.oaiNamespacedCall(c, "wait_agent", map[string]any{"timeout_ms": 600000}))
	case c.HasTool("exec_command"):
		args := map[string]any{"cmd": cmd, "yield_time_ms": 30000}
		if rep.Call.Unsandboxed {
			// Codex's escalation request: run outside the sandbox.
			args["sandbox_permissions"], args["justification"] = "require_escalated", "needs to write outside the project"
		}
		out = append(out, s.oaiFunctionCall("exec_command", args))
	case c.HasTool("exec"):
		// Code mode: the shell tool is reached from JavaScript run by "exec".
		out = append(out, map[string]any{"id": s.newID("ctc_"), "type": "custom_tool_call", "status": "completed",
			"name": "exec", "input": codeModeExec(cmd), "call_id": s.newID("call_")})
	case c.HasTool("shell"):
		out = append(out, s.oaiFunctionCall("shell", map[string]any{"command": []string{"bash", "-lc", cmd}}))
	case c.HasTool("bash"):
		// GitHub Copilot CLI's shell tool: "sync" waits for the command, but
		// only initial_wait seconds (30 by default) before it answers with
		// the output so far; a step can take longer.
		out = append(out, s.oaiFunctionCall("bash", map[string]any{"command": cmd, "description": "Run a command",
			"mode": "sync", "initial_wait": 600}))
	default:
		out = append(out, s.oaiFunctionCall("exec_command", map[string]any{"cmd": cmd}))
	}
	return out
}

func (s *Server) oaiFunctionCall(name string, args map[string]any) map[string]any {
	return map[string]any{"id": s.newID("fc_"), "type": "function_call", "status": "completed",
		"name": name, "arguments": string(marshal(args)), "call_id": s.newID("call_")}
}

// oaiNamespacedCall is a function call on a tool that may be offered in a
// namespace (Codex 0.169's subagent tools, in "collaboration"): the call
// names the namespace, else Codex answers "unsupported call".
func (s *Server) oaiNamespacedCall(c *Conversation, name string, args map[string]any) map[string]any {
	fc := s.oaiFunctionCall(name, args)
	if ns := c.Namespaces[name]; ns != "" {
		fc["namespace"] = ns
	}
	return fc
}

// codeModeExec is the JavaScript that runs cmd through Codex's nested
// exec_command tool, polls it to its end when it outlives one yield, and
// hands back its output (and a non-zero exit code), as a model would write it.
func codeModeExec(cmd string) string {
	return "// @exec: {\"yield_time_ms\": 600000}\n" +
		"let r = await tools.exec_command(" + string(marshal(map[string]any{"cmd": cmd, "yield_time_ms": 30000})) + ");\n" +
		"let out = r.output ?? \"\";\n" +
		"while (r.exit_code === undefined && r.session_id !== undefined) {\n" +
		"  r = await tools.write_stdin({session_id: r.session_id, chars: \"\", yield_time_ms: 30000});\n" +
		"  out += r.output ?? \"\";\n" +
		"}\n" +
		"text(r.exit_code ? out + \"\\n(exit code \" + r.exit_code + \")\" : out);\n"
}

// streamOAIItem streams one output item: added, its deltas, done.
func streamOAIItem(e *sse, i int, item map[string]any) {
	open := map[string]any{}
	for k, v := range item {
		open[k] = v
	}
	open["status"] = "in_progress"
	id := item["id"]
	switch item["type"] {
	case "custom_tool_call":
		open["input"] = ""
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": open})
		e.event("response.custom_tool_call_input.delta", map[string]any{"type": "response.custom_tool_call_input.delta",
			"item_id": id, "output_index": i, "delta": item["input"]})
		e.event("response.custom_tool_call_input.done", map[string]any{"type": "response.custom_tool_call_input.done",
			"item_id": id, "output_index": i, "input": item["input"]})
	case "function_call":
		open["arguments"] = ""
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": open})
		e.event("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta",
			"item_id": id, "output_index": i, "delta": item["arguments"]})
		e.event("response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done",
			"item_id": id, "output_index": i, "arguments": item["arguments"]})
	default:
		open["content"] = []any{}
		text := item["content"].([]any)[0].(map[string]any)["text"]
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": open})
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		e.event("response.content_part.added", map[string]any{"type": "response.content_part.added", "item_id": id,
			"output_index": i, "content_index": 0, "part": part})
		e.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": id,
			"output_index": i, "content_index": 0, "delta": text})
		e.event("response.output_text.done", map[string]any{"type": "response.output_text.done", "item_id": id,
			"output_index": i, "content_index": 0, "text": text})
		e.event("response.content_part.done", map[string]any{"type": "response.content_part.done", "item_id": id,
			"output_index": i, "content_index": 0, "part": item["content"].([]any)[0]})
	}
	e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
}

// oaiUsage is the Responses API's usage: input_tokens includes the cached
// tokens, which input_tokens_details.cached_tokens repeats.
func oaiUsage(u Usage) map[string]any {
	in := u.InputTokens + u.CacheReadTokens
	return map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": u.CacheReadTokens},
		"output_tokens": u.OutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": in + u.OutputTokens}
}

// createdAt is every response's creation time: fixed, so answers are
// byte-for-byte reproducible (2026-01-01T00:00:00Z; no client reads it).
const createdAt = 1767225600

func oaiError(kind, msg string) map[string]any {
	return map[string]any{"error": map[string]any{"type": kind, "message": msg, "code": kind}}
}

// openaiModels lists the one model callers ask about, for clients that
// check the list before they start.
func (s *Server) openaiModels(w http.ResponseWriter, r *http.Request) {
	s.add(Exchange{Protocol: ProtocolOpenAI, Method: r.Method, Path: r.RequestURI, Side: true, Status: 200})
	writeJSONBody(w, 200, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": "model-sim", "object": "model", "owned_by": "model-sim"}}})
}
