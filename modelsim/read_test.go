package modelsim

import (
	"strings"
	"testing"
)

// A read goes through the CLI's own file tool where it has one, else
// through its shell as cat.
func TestAReadGoesThroughTheFileToolElseTheShell(t *testing.T) {
	s := start(t, Options{Script: script(t, `rules: [{actions: [{read: /h/.ssh/id_ed25519}]}]`)})
	_, body := post(t, s, "/v1/messages", mustJSON(map[string]any{"model": "m", "stream": false,
		"tools":    []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Read"}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}}}}))
	if !strings.Contains(body, `"input":{"file_path":"/h/.ssh/id_ed25519"},"name":"Read"`) {
		t.Errorf("Claude Code: want a Read tool_use, got %s", body)
	}
	_, body = post(t, s, "/v1beta/models/m:generateContent", mustJSON(map[string]any{
		"tools":    []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "read_file"}, map[string]any{"name": "run_shell_command"}}}},
		"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}}}))
	if !strings.Contains(body, `"functionCall":{"args":{"file_path":"/h/.ssh/id_ed25519"},"name":"read_file"}`) {
		t.Errorf("Gemini CLI: want a read_file call, got %s", body)
	}
	_, body = post(t, s, "/v1/messages", mustJSON(map[string]any{"model": "m", "stream": false,
		"tools":    []any{map[string]any{"name": "Bash"}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}}}}))
	if !strings.Contains(body, `"command":"cat /h/.ssh/id_ed25519"`) {
		t.Errorf("no file tool: want cat in the shell, got %s", body)
	}
}

// Claude Code's Read takes only an absolute path: a relative read (or one
// a capture fills in later) goes through its shell as cat.
func TestARelativeReadGoesThroughTheShell(t *testing.T) {
	s := start(t, Options{Script: script(t, `rules: [{actions: [{read: notes.txt}]}]`)})
	_, body := post(t, s, "/v1/messages", mustJSON(map[string]any{"model": "m", "stream": false,
		"tools":    []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Read"}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "go"}}}}}))
	if !strings.Contains(body, `"command":"cat notes.txt"`) {
		t.Errorf("Claude Code, relative path: want cat in the shell, got %s", body)
	}
}
