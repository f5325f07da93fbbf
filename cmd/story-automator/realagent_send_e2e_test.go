package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/story-automator/story-automator/modelsim/offline"
)

// sendScript answers the first turn and each sent prompt with a line of its
// own, so a test can tell which turn the screen shows.
const sendScript = `
rules:
  - match: "say hello"
    actions:
      - reply: "Hello from model-sim."
  - match: "long request"
    actions:
      - reply: "Got the long request."
  - match: "short request"
    actions:
      - reply: "Got the short request."
`

// hostileSend is what a person might send a running agent: several lines
// with quotes, a $() and a backtick command a shell would run, a backslash
// and unicode. Long (14 lines, over 1000 characters), each pinned CLI
// shows it collapsed to its paste placeholder; short, it is a few lines.
func hostileSend(kind string, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This is the %s request; keep every byte.\n", kind)
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "Line %d: \"double\" 'single' $(touch pwned) `touch pwned2` $HOME \\ back — ünïcödé 日本語 🚀 padding to widen the line\n", i)
	}
	b.WriteString("The end;")
	return b.String()
}

// Codex and Gemini CLI start an interactive child from a custom command,
// with a first prompt (their unattended profiles are one-shot); Claude
// Code's profile is interactive already. Interactive Codex 0.169 starts its
// shared background server unless told --no-daemon, and that server
// outlives the test. Run unconfined (their bypass switches say so), a
// custom command is not wrapped in this tool's sandbox.
var interactiveSpawn = map[string][]string{
	"claude": {"--agent", "claude"},
	"codex":  {"--agent", "custom", "--sandbox", "off", "--command", "codex --no-daemon --dangerously-bypass-approvals-and-sandbox {prompt}"},
	"gemini": {"--agent", "custom", "--sandbox", "off", "--command", "gemini --yolo -i {prompt}"},
}

// The send tests run beside the other parallel end-to-end runs: under that
// load Gemini CLI 0.61 takes an Enter after a paste as a newline, or
// ignores it, now and then, and send must see that and submit the text all
// the same (tmux/child/send_submit.go).
func TestRealClaudeSendArrivesByteExact(t *testing.T) {
	t.Parallel()
	testRealSend(t, "claude", offline.Claude)
}
func TestRealCodexSendArrivesByteExact(t *testing.T) {
	t.Parallel()
	testRealSend(t, "codex", offline.Codex)
}
func TestRealGeminiSendArrivesByteExact(t *testing.T) {
	t.Parallel()
	testRealSend(t, "gemini", offline.Gemini)
}

// testRealSend sends a long and a short hostile prompt to an interactive
// child of the real CLI through `session send`, and finds each, byte for
// byte, in the request the CLI then made to the model.
func testRealSend(t *testing.T, agent string, home func(offline.Config) (offline.Env, error)) {
	p := newRealAgentProject(t, agent, home, sendScript, offline.Dialogs{})
	name := p.spawn(p.env, append(interactiveSpawn[agent], "--prompt", "Please say hello.")...)
	p.waitIdleAfter(name, "Hello from model-sim.")
	for _, tc := range []struct{ kind, reply string }{{"long", "Got the long request."}, {"short", "Got the short request."}} {
		lines := 12
		if tc.kind == "short" {
			lines = 2
		}
		text := hostileSend(tc.kind, lines)
		res, code := p.run(p.env, "session", "send", name, "--text", text)
		if code != 0 || res["delivered"] != true {
			t.Fatalf("%s send: %d %v\nscreen:\n%s", tc.kind, code, res, p.screen(name))
		}
		got := p.waitUserText(name, text)
		if got != text && !(agent == "claude" && claudePasteFrame(got, text)) {
			t.Fatalf("%s send: the model got\n%q\nwant\n%q", tc.kind, got, text)
		}
		p.waitIdleAfter(name, tc.reply)
	}
	if _, err := os.Stat(filepath.Join(p.root, "pwned")); err == nil {
		t.Fatal("a $() in the sent text ran")
	}
}

// claudePasteFrame reports whether got is text framed the way Claude Code
// 2.1.328 sends a collapsed paste: `<pasted_content id="X">` on a line of
// its own before the text and `</pasted_content id="X">` after it.
func claudePasteFrame(got, text string) bool {
	body, ok := strings.CutPrefix(strings.TrimLeft(got, "\n"), "<pasted_content id=\"")
	if !ok {
		return false
	}
	id, rest, ok := strings.Cut(body, "\">\n")
	return ok && rest == text+"\n</pasted_content id=\""+id+"\">\n"
}

// screen is the child's pane as `session capture` shows it.
func (p *realClaudeProject) screen(name string) string {
	res, _ := p.run(p.env, "session", "capture", name, "--lines", "60")
	return stringOr(res["text"])
}

// waitIdleAfter waits until the child's screen shows reply and the CLI no
// longer offers to interrupt a turn ("esc to interrupt" in Claude Code and
// Codex, "esc to cancel" in Gemini CLI while a turn runs, in real captures).
func (p *realClaudeProject) waitIdleAfter(name, reply string) {
	p.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s := p.screen(name)
		if strings.Contains(s, reply) && !strings.Contains(s, "esc to interrupt") && !strings.Contains(s, "esc to cancel") {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the child never went idle after %q; screen:\n%s", reply, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitUserText waits for a main-turn request whose user messages hold
// text, and returns the text part that holds it, as the CLI sent it.
func (p *realClaudeProject) waitUserText(name, text string) string {
	p.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		changed := p.srv.Changed()
		for _, ex := range p.srv.Exchanges() {
			if ex.Side {
				continue
			}
			for _, s := range userTextParts(p.t, ex.Request) {
				if strings.Contains(s, text) {
					return s
				}
			}
		}
		select {
		case <-changed:
		case <-timeout:
			p.t.Fatalf("the text never reached the model (%d exchanges); screen:\n%s", len(p.srv.Exchanges()), p.screen(name))
		}
	}
}

// userTextParts lists the text of every user message of a request in any of
// model-sim's protocols: Anthropic messages[].content (a string or text
// blocks), OpenAI Responses input[].content[].text, Gemini contents[].parts[].text.
func userTextParts(t testing.TB, raw json.RawMessage) []string {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Input    json.RawMessage `json:"input"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatalf("model-sim recorded a request that is not JSON: %v", err)
	}
	var out []string
	for _, m := range req.Messages {
		if m.Role == "user" {
			out = append(out, contentTexts(m.Content)...)
		}
	}
	var items []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(req.Input, &items) == nil {
		for _, it := range items {
			if it.Role == "user" {
				out = append(out, contentTexts(it.Content)...)
			}
		}
	}
	for _, c := range req.Contents {
		if c.Role == "user" {
			for _, part := range c.Parts {
				out = append(out, part.Text)
			}
		}
	}
	return out
}

// contentTexts reads a message content that is a string or a list of blocks with text.
func contentTexts(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	out := make([]string, 0, len(blocks))
	for _, b := range blocks {
		out = append(out, b.Text)
	}
	return out
}
