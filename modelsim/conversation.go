package modelsim

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/story-automator/story-automator/internal/shellword"
)

// Protocols an adapter speaks.
const (
	ProtocolAnthropic = "anthropic"
	ProtocolOpenAI    = "openai"
	ProtocolGemini    = "gemini"
)

// Roles of a normalised message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool is a tool's result, whatever role the protocol files it under.
	RoleTool = "tool"
)

// Conversation is the brain's view of one request, the same for every protocol.
type Conversation struct {
	Protocol string
	Model    string
	System   string
	Messages []Message
	// Tools names the tools the CLI offered; Namespaces, the namespace of
	// those offered in one (OpenAI Responses: a call names it).
	Tools      []string
	Namespaces map[string]string
	// Side marks a request that is not the agent's main turn: a title, a
	// classifier, a JSON-schema question. Schema is that JSON schema, if any.
	Side   bool
	Schema map[string]any
}

// Message is one entry of the conversation.
type Message struct {
	Role string
	Text string
	// Calls are the tool calls an assistant message made.
	Calls []ToolCall
	// Result is a tool message's output.
	Result string
}

// ToolCall is a tool call as the CLI sent it back in the history.
type ToolCall struct {
	ID   string
	Name string
	Args map[string]any
}

// HasTool reports whether the CLI offered the named tool.
func (c *Conversation) HasTool(name string) bool {
	for _, t := range c.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// turn locates the latest user turn: its index and text, how many tool calls
// the assistant made since, and the latest tool result. A user message that
// carries only system reminders still counts as the user's turn.
func (c *Conversation) turn() (idx int, text string, calls int, lastResult string) {
	idx = -1
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == RoleUser {
			idx, text = i, c.Messages[i].Text
			break
		}
	}
	for _, m := range c.Messages[idx+1:] {
		calls += len(m.Calls)
		if m.Role == RoleTool {
			lastResult = m.Result
		}
	}
	return idx, text, calls, lastResult
}

// results lists the tool outputs after the user turn at idx, in order: one
// per call the brain made in that turn.
func (c *Conversation) results(idx int) []string {
	var out []string
	for _, m := range c.Messages[idx+1:] {
		if m.Role == RoleTool {
			out = append(out, m.Result)
		}
	}
	return out
}

// userTexts lists the text of every user turn up to and including idx.
func (c *Conversation) userTexts(idx int) []string {
	var out []string
	for i := 0; i <= idx && i < len(c.Messages); i++ {
		if c.Messages[i].Role == RoleUser {
			out = append(out, c.Messages[i].Text)
		}
	}
	return out
}

// Usage is what one response reports, in canonical form: uncached input,
// output, cache-read and cache-write tokens. Each adapter expresses it in its
// protocol's own usage shape.
type Usage struct {
	InputTokens      int `json:"inputTokens" yaml:"input"`
	OutputTokens     int `json:"outputTokens" yaml:"output"`
	CacheReadTokens  int `json:"cacheReadTokens" yaml:"cacheRead"`
	CacheWriteTokens int `json:"cacheWriteTokens" yaml:"cacheWrite"`
}

// DefaultUsage is reported by every response unless a script says otherwise.
// The four figures differ so a test catches one field read as another.
var DefaultUsage = Usage{InputTokens: 1200, OutputTokens: 60, CacheReadTokens: 300, CacheWriteTokens: 40}

// Reply is what the brain answers to one request.
type Reply struct {
	// Text is the assistant's text (a final answer, or words before a call).
	Text string
	// Call is at most one tool call; nil ends the turn.
	Call  *Call
	Usage Usage
	// Delay is waited before the response starts.
	Delay time.Duration
	// Hang: the response never comes (until the client goes or the server closes).
	Hang bool
	// ErrorStatus, when set, answers with that HTTP status and the protocol's error body.
	ErrorStatus int
}

// Call is a tool call in the brain's terms; each adapter maps it onto the
// CLI's own tool (Bash, exec_command, run_shell_command, Write, write_file).
type Call struct {
	// Shell is a shell command line.
	Shell string `json:"shell,omitempty"`
	// Background asks for the shell command as a background task.
	Background bool `json:"background,omitempty"`
	// WritePath and WriteContent write a file (through the CLI's write tool
	// when it has one, else through its shell).
	WritePath    string `json:"writePath,omitempty"`
	WriteContent string `json:"writeContent,omitempty"`
	// ReadPath reads a file (through the CLI's read tool when it has one,
	// else through its shell).
	ReadPath string `json:"readPath,omitempty"`
	// Skill activates the installed skill of that name through the CLI's
	// skill tool (SkillTool, SkillToolNamed).
	Skill string `json:"skill,omitempty"`
	// Subagent launches a subagent with this prompt through the CLI's
	// subagent tool (subagentTool).
	Subagent string `json:"subagent,omitempty"`
	// WaitAgent waits for the subagents the turn launched, on a CLI whose
	// launch does not wait (Codex's wait_agent after its spawn_agent).
	WaitAgent bool `json:"waitAgent,omitempty"`
	// Unsandboxed asks the CLI to run the shell command outside its
	// sandbox, through the CLI's own escape hatch (a hostile model's ask).
	Unsandboxed bool `json:"unsandboxed,omitempty"`
}

// shellCommand is the call as a shell command line: writes without a write
// tool go through a quoted printf (after making the file's folder), reads
// through cat.
func (c *Call) shellCommand() string {
	if c.Shell != "" {
		return c.Shell
	}
	if c.ReadPath != "" {
		return "cat " + shellArg(c.ReadPath)
	}
	write := "printf '%s' " + shellArg(c.WriteContent) + " > " + shellArg(c.WritePath)
	if dir := filepath.Dir(c.WritePath); dir != "." && dir != "/" {
		// A write tool makes the file's folder; so does this.
		return "mkdir -p " + shellArg(dir) + " && " + write
	}
	return write
}

// shellArg is s as one shell word (a NUL byte, which no shell can carry,
// is dropped).
func shellArg(s string) string {
	return shellword.MustQuote(strings.ReplaceAll(s, "\x00", ""))
}

// Conversation reads the exchange's request back as the brain saw it; nil
// when the exchange kept no request or its protocol is unknown.
func (e Exchange) Conversation() *Conversation {
	if len(e.Request) == 0 {
		return nil
	}
	switch e.Protocol {
	case ProtocolAnthropic:
		var req antRequest
		if json.Unmarshal(e.Request, &req) == nil {
			return anthropicConversation(&req)
		}
	case ProtocolOpenAI:
		var req oaiRequest
		if json.Unmarshal(e.Request, &req) == nil {
			return openaiConversation(&req)
		}
	case ProtocolGemini:
		var req gemRequest
		if json.Unmarshal(e.Request, &req) == nil {
			return geminiConversation(e.Model, &req)
		}
	}
	return nil
}

// LastToolResult is the output of the last tool call the request answers,
// and whether its last message is one.
func (c *Conversation) LastToolResult() (string, bool) {
	if c == nil || len(c.Messages) == 0 {
		return "", false
	}
	m := c.Messages[len(c.Messages)-1]
	return m.Result, m.Role == RoleTool
}
