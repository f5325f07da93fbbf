package modelsim

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Gemini (Gemini CLI): POST /v1beta/models/MODEL:streamGenerateContent?alt=sse,
// MODEL:generateContent (its JSON-schema side requests) and MODEL:countTokens.

type gemRequest struct {
	Contents          []gemContent `json:"contents"`
	SystemInstruction *gemContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig *struct {
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseSchema     map[string]any `json:"responseSchema"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

type gemContent struct {
	Role  string    `json:"role"`
	Parts []gemPart `json:"parts"`
}

type gemPart struct {
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	} `json:"functionResponse"`
}

// gemModelMethod splits ".../models/MODEL:METHOD".
func gemModelMethod(path string) (string, string) {
	i := strings.Index(path, "/models/")
	if i < 0 {
		return "", ""
	}
	model, method, _ := strings.Cut(path[i+len("/models/"):], ":")
	return model, method
}

func geminiConversation(model string, req *gemRequest) *Conversation {
	c := &Conversation{Protocol: ProtocolGemini, Model: model}
	if req.SystemInstruction != nil {
		c.System = gemText(req.SystemInstruction.Parts)
	}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			c.Tools = append(c.Tools, f.Name)
		}
	}
	for _, ct := range req.Contents {
		var results []Message
		msg := Message{Role: RoleUser}
		if ct.Role == "model" {
			msg.Role = RoleAssistant
		}
		for _, p := range ct.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.Calls = append(msg.Calls, ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				out, _ := json.Marshal(p.FunctionResponse.Response)
				if s, ok := p.FunctionResponse.Response["output"].(string); ok {
					out = []byte(s)
				}
				results = append(results, Message{Role: RoleTool, Result: string(out)})
			}
		}
		msg.Text = gemText(ct.Parts)
		switch {
		case results != nil:
			// A tool's answer, not a new user turn.
			c.Messages = append(c.Messages, results...)
		case msg.Role == RoleAssistant || msg.Text != "":
			c.Messages = append(c.Messages, msg)
		}
	}
	c.Side = len(c.Tools) == 0
	if g := req.GenerationConfig; g != nil {
		if g.ResponseJSONSchema != nil {
			c.Side, c.Schema = true, g.ResponseJSONSchema
		} else if g.ResponseSchema != nil {
			c.Side, c.Schema = true, g.ResponseSchema
		}
	}
	return c
}

// gemText joins the text parts, leaving out thoughts and the session
// context Gemini CLI puts before the user's first prompt.
func gemText(parts []gemPart) string {
	var out []string
	for _, p := range parts {
		if p.Text != "" && !p.Thought && !strings.HasPrefix(strings.TrimSpace(p.Text), "<session_context>") {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

func (s *Server) gemini(w http.ResponseWriter, r *http.Request, body []byte) {
	model, method := gemModelMethod(r.URL.Path)
	if method == "countTokens" {
		s.add(Exchange{Protocol: ProtocolGemini, Method: r.Method, Path: r.RequestURI, Model: model,
			Side: true, Status: 200, Request: rawOrNil(body)})
		writeJSONBody(w, 200, map[string]any{"totalTokens": len(body) / 4})
		return
	}
	if method != "generateContent" && method != "streamGenerateContent" {
		s.add(Exchange{Protocol: ProtocolGemini, Method: r.Method, Path: r.RequestURI, Status: 404})
		writeJSONBody(w, 404, gemError(404, "model-sim: no such method "+method))
		return
	}
	var req gemRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSONBody(w, 400, gemError(400, "model-sim: "+err.Error()))
		return
	}
	conv := geminiConversation(model, &req)
	if s.limitFault(w, r, body, ProtocolGemini, model, conv.Side) {
		return
	}
	rep := s.brain.Respond(conv)
	usage := Usage{InputTokens: rep.Usage.InputTokens + rep.Usage.CacheWriteTokens,
		OutputTokens: rep.Usage.OutputTokens, CacheReadTokens: rep.Usage.CacheReadTokens}
	if !s.answer(r, body, ProtocolGemini, model, conv, rep, usage) {
		return
	}
	if rep.ErrorStatus != 0 {
		writeJSONBody(w, rep.ErrorStatus, gemError(rep.ErrorStatus, "model-sim: scripted error"))
		return
	}
	resp := map[string]any{"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
		"content": map[string]any{"role": "model", "parts": gemParts(conv, rep)}}},
		"usageMetadata": gemUsage(usage), "modelVersion": model, "responseId": s.newID("resp_")}
	if method == "generateContent" {
		writeJSONBody(w, 200, resp)
		return
	}
	// One chunk holds the whole answer; Gemini's stream is data-only SSE.
	newSSE(w).event("", resp)
}

// gemCompleteTask is the tool with which a Gemini CLI subagent (invoke_agent)
// returns its result; a subagent that ends its turn without it fails.
const gemCompleteTask = "complete_task"

// gemParts is the reply as parts: text, then one function call on Gemini
// CLI's own tool (run_shell_command, write_file, read_file, activate_skill).
func gemParts(c *Conversation, rep Reply) []any {
	var parts []any
	if rep.Call == nil && c.HasTool(gemCompleteTask) {
		// A Gemini CLI subagent ends by handing its answer to complete_task
		// (the generalist's output: {"result": {"response": TEXT}}).
		return append(parts, map[string]any{"functionCall": map[string]any{"name": gemCompleteTask,
			"args": map[string]any{"result": map[string]any{"response": rep.Text}}}})
	}
	if rep.Text != "" || rep.Call == nil {
		parts = append(parts, map[string]any{"text": rep.Text})
	}
	if rep.Call != nil {
		name, args := "run_shell_command", map[string]any{"command": rep.Call.shellCommand()}
		if rep.Call.Unsandboxed {
			// Gemini CLI's request for more sandbox permissions.
			args["additional_permissions"] = map[string]any{"network": true,
				"fileSystem": map[string]any{"write": []string{"/"}}}
		}
		if rep.Call.Shell == "" && rep.Call.WritePath != "" && c.HasTool("write_file") {
			name, args = "write_file", map[string]any{"file_path": rep.Call.WritePath, "content": rep.Call.WriteContent}
		}
		if rep.Call.ReadPath != "" && c.HasTool("read_file") {
			name, args = "read_file", map[string]any{"file_path": rep.Call.ReadPath}
		}
		if rep.Call.Skill != "" {
			name, args = SkillTool, map[string]any{"name": rep.Call.Skill}
		}
		if rep.Call.Subagent != "" {
			name, args = "invoke_agent", map[string]any{"agent_name": "generalist", "prompt": rep.Call.Subagent}
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": name, "args": args}})
	}
	return parts
}

// gemUsage is Gemini's usageMetadata: promptTokenCount includes the cached
// tokens, which cachedContentTokenCount repeats.
func gemUsage(u Usage) map[string]any {
	prompt := u.InputTokens + u.CacheReadTokens
	return map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": u.OutputTokens,
		"cachedContentTokenCount": u.CacheReadTokens, "totalTokenCount": prompt + u.OutputTokens}
}

func gemError(code int, msg string) map[string]any {
	status := "INTERNAL"
	switch code {
	case 400:
		status = "INVALID_ARGUMENT"
	case 404:
		status = "NOT_FOUND"
	}
	return map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}}
}
