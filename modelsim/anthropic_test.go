package modelsim

import (
	"encoding/json"
	"strings"
	"testing"
)

// The two requests Claude Code 2.1.328 sent for `claude -p 'Please run
// `echo hello > proof.txt` now.'`: the prompt, then the Bash tool's result.
func TestAnthropicAnswersRealClaudeRequests(t *testing.T) {
	s := start(t, Options{})
	postGolden(t, s, "/v1/messages?beta=true", fixture(t, "claude-2.1.328/messages-1.json"), "anthropic-tool-use.sse")
	postGolden(t, s, "/v1/messages?beta=true", fixture(t, "claude-2.1.328/messages-2.json"), "anthropic-end-turn.sse")

	ex := s.Exchanges()
	if len(ex) != 2 {
		t.Fatalf("%d exchanges, want 2", len(ex))
	}
	if ex[0].Call == nil || ex[0].Call.Shell != "echo hello > proof.txt" || ex[0].Model != "claude-opus-5-5" {
		t.Errorf("first exchange = %+v, want the Bash call on claude-opus-5-5", ex[0])
	}
	if ex[1].Call != nil || ex[1].Text != "Done. The command said: (Bash completed with no output)" {
		t.Errorf("second exchange = %+v, want the final text", ex[1])
	}
	want := Usage{InputTokens: 2400, OutputTokens: 120, CacheReadTokens: 600, CacheWriteTokens: 80}
	if got := s.TotalUsage(); got != want {
		t.Errorf("total usage %+v, want %+v", got, want)
	}
}

func TestAnthropicStreamsToolUseAndUsage(t *testing.T) {
	s := start(t, Options{})
	req := mustJSON(map[string]any{"model": "m", "stream": true, "tools": []any{map[string]any{"name": "Bash"}},
		"messages": []any{map[string]any{"role": "user", "content": "please run `touch x`"}}})
	_, stream := post(t, s, "/v1/messages", req)
	ev := sseData(t, stream)
	var kinds []string
	for _, e := range ev {
		kinds = append(kinds, e["type"].(string))
	}
	if got := strings.Join(kinds, ","); got != "message_start,content_block_start,content_block_delta,content_block_stop,message_delta,message_stop" {
		t.Fatalf("events %s", got)
	}
	block := ev[1]["content_block"].(map[string]any)
	if block["type"] != "tool_use" || block["name"] != "Bash" {
		t.Errorf("block %v, want a Bash tool_use", block)
	}
	if d := ev[2]["delta"].(map[string]any); d["partial_json"] != `{"command":"touch x","description":"Run a command"}` {
		t.Errorf("input %v", d["partial_json"])
	}
	u := ev[4]["usage"].(map[string]any)
	if u["input_tokens"] != 1200.0 || u["output_tokens"] != 60.0 || u["cache_read_input_tokens"] != 300.0 || u["cache_creation_input_tokens"] != 40.0 {
		t.Errorf("usage %v", u)
	}
	if ev[4]["delta"].(map[string]any)["stop_reason"] != "tool_use" {
		t.Errorf("stop reason %v", ev[4]["delta"])
	}
}

func TestAnthropicWritesThroughWriteToolForAbsolutePaths(t *testing.T) {
	sc, err := ParseScript([]byte(`rules: [{match: note, actions: [{write: {path: /tmp/x/note.txt, content: "hi\n"}}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Script: sc})
	req := mustJSON(map[string]any{"model": "m", "stream": false, "tools": []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Write"}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "write a note"}}}}})
	_, body := post(t, s, "/v1/messages", req)
	if !strings.Contains(body, `"name":"Write"`) || !strings.Contains(body, `"file_path":"/tmp/x/note.txt"`) {
		t.Errorf("want a Write tool_use, got %s", body)
	}
}

func TestAnthropicSideRequestsAndCountTokens(t *testing.T) {
	s := start(t, Options{})
	_, body := post(t, s, "/v1/messages", mustJSON(map[string]any{"model": "haiku", "stream": false,
		"messages": []any{map[string]any{"role": "user", "content": "Write a 5-word title for this chat"}}}))
	if !strings.Contains(body, `"text":"model-sim session"`) || !strings.Contains(body, `"stop_reason":"end_turn"`) {
		t.Errorf("side answer %s", body)
	}
	status, body := post(t, s, "/v1/messages/count_tokens", []byte(`{"model":"m","messages":[]}`))
	if status != 200 || !strings.Contains(body, `"input_tokens":`) {
		t.Errorf("count_tokens %d %s", status, body)
	}
	ex := s.Exchanges()
	if len(ex) != 2 || !ex[0].Side || !ex[1].Side || ex[1].Usage != (Usage{}) {
		t.Errorf("exchanges %+v: want two side exchanges, count_tokens without usage", ex)
	}
}

// A Stop hook's block reaches Claude's model as a new user message
// "Stop hook feedback:\nREASON" (followed by a system entry); the brain
// does the next iteration the reason asks for.
func TestAnthropicAnswersClaudeStopHookFeedback(t *testing.T) {
	s := start(t, Options{})
	post(t, s, "/v1/messages?beta=true", fixture(t, "claude-2.1.328/messages-stop-feedback.json"))
	if ex := s.Exchanges(); len(ex) != 1 || ex[0].Call == nil || ex[0].Call.Shell != "echo 2 >> ticks.txt" {
		t.Fatalf("exchanges %+v, want the second iteration's command", ex)
	}
}

// A background action is Claude Code's Bash run_in_background, and the
// <task-notification> reminder that wakes the session when it ends is user
// text the script can match (other system reminders are not).
func TestAnthropicBackgroundTasksAndTheirNotification(t *testing.T) {
	sc, err := ParseScript([]byte(`
rules:
  - match: "run the stories"
    actions: [{shell: "sleep 100", background: true}, {reply: "Started."}]
  - match: "task-notification"
    actions: [{reply: "The run ended."}]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Script: sc})
	tools := []any{map[string]any{"name": "Bash"}}
	req := mustJSON(map[string]any{"model": "m", "stream": true, "tools": tools,
		"messages": []any{map[string]any{"role": "user", "content": "please run the stories"}}})
	_, stream := post(t, s, "/v1/messages", req)
	if d := sseData(t, stream)[2]["delta"].(map[string]any); d["partial_json"] != `{"command":"sleep 100","description":"Run a command","run_in_background":true}` {
		t.Errorf("input %v", d["partial_json"])
	}
	notification := "<system-reminder>\nThis is an automated background-task event.\n<task-notification>\n<status>completed</status>\n</task-notification>\n</system-reminder>"
	for _, tc := range []struct{ text, want string }{
		{notification, "The run ended."},
		{"<system-reminder>\nsome other reminder\n</system-reminder>", ""},
	} {
		req = mustJSON(map[string]any{"model": "m", "stream": true, "tools": tools, "messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": tc.text}}}}})
		post(t, s, "/v1/messages", req)
		ex := s.Exchanges()
		if got := ex[len(ex)-1].Text; (tc.want != "" && got != tc.want) || (tc.want == "" && got == "The run ended.") {
			t.Errorf("%q answered %q", tc.text, got)
		}
	}
}

// A subagent action is Claude Code's Agent tool, asked to wait for the
// subagent (run_in_background false).
func TestAnthropicLaunchesASubagentThroughAgent(t *testing.T) {
	s := start(t, Options{Script: script(t, `rules: [{actions: [{subagent: "look"}]}]`)})
	req := mustJSON(map[string]any{"model": "m", "stream": true, "tools": []any{map[string]any{"name": "Bash"}, map[string]any{"name": "Agent"}},
		"messages": []any{map[string]any{"role": "user", "content": "go"}}})
	_, stream := post(t, s, "/v1/messages", req)
	data := sseData(t, stream)
	if b := data[1]["content_block"].(map[string]any); b["name"] != "Agent" {
		t.Errorf("block %v", b)
	}
	if d := data[2]["delta"].(map[string]any); d["partial_json"] != `{"description":"model-sim subagent","prompt":"look","run_in_background":false,"subagent_type":"general-purpose"}` {
		t.Errorf("input %v", d["partial_json"])
	}
}

// OpenCode 1.18 loads a skill with its "skill" tool ({"name": NAME}), whose
// result is the skill's text and folder, and launches a subagent with its
// "task" tool (its general agent), whose result is the subagent's answer.
func TestAnthropicOpenCodeLoadsASkillAndRunsATask(t *testing.T) {
	s := start(t, Options{Script: script(t, `
rules:
  - match: "use my-skill"
    actions:
      - skill: my-skill
        capture: {dir: 'Base directory for this skill: (\S+)'}
      - subagent: "Review {{.dir}}"
`)})
	tools := []any{map[string]any{"name": "bash"}, map[string]any{"name": "skill"}, map[string]any{"name": "task"}}
	call := func(messages ...any) map[string]any {
		t.Helper()
		_, body := post(t, s, "/v1/messages", mustJSON(map[string]any{"model": "m", "tools": tools, "messages": messages}))
		var resp struct {
			Content []map[string]any `json:"content"`
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Content) == 0 {
			t.Fatalf("%v: %s", err, body)
		}
		return resp.Content[len(resp.Content)-1]
	}
	turn := []any{map[string]any{"role": "user", "content": "use my-skill"}}
	load := call(turn...)
	if load["name"] != "skill" || string(mustJSON(load["input"])) != `{"name":"my-skill"}` {
		t.Fatalf("load %v", load)
	}
	turn = append(turn, map[string]any{"role": "assistant", "content": []any{load}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": load["id"],
			"content": "<skill_content name=\"my-skill\">\n# Skill: my-skill\n\nBase directory for this skill: /p/.claude/skills/my-skill\n</skill_content>"}}})
	task := call(turn...)
	if task["name"] != "task" || string(mustJSON(task["input"])) != `{"description":"model-sim subagent","prompt":"Review /p/.claude/skills/my-skill","subagent_type":"general"}` {
		t.Fatalf("the subagent's launch %v", task)
	}
}
