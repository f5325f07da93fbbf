package modelsim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Codex 0.169.0 with its default model works in "code mode": its tools come
// in an additional_tools input item, and the shell is reached from
// JavaScript that the custom tool "exec" runs.
func TestOpenAIAnswersRealCodexCodeModeRequests(t *testing.T) {
	s := start(t, Options{})
	first := postGolden(t, s, "/v1/responses", fixture(t, "codex-0.169.0/responses-1.json"), "openai-code-mode-call.sse")
	postGolden(t, s, "/v1/responses", fixture(t, "codex-0.169.0/responses-2.json"), "openai-code-mode-end.sse")
	ex := s.Exchanges()
	if ex[0].Call == nil || ex[0].Call.Shell != "echo hello; sleep 35; echo world > proof2.txt; exit 3" || ex[0].Model != "gpt-6.1-sol" {
		t.Errorf("first exchange %+v", ex[0])
	}
	if ex[1].Call != nil || ex[1].Text != "Done. The command said: (exit code 3)" {
		t.Errorf("second exchange %+v", ex[1])
	}
	ev := sseData(t, first)
	item := ev[len(ev)-2]["item"].(map[string]any)
	if item["type"] != "custom_tool_call" || item["name"] != "exec" || !strings.Contains(item["input"].(string), "await tools.exec_command(") {
		t.Errorf("call item %v", item)
	}
}

// With a model Codex does not know, it offers exec_command as a function.
func TestOpenAIAnswersRealCodexFunctionRequests(t *testing.T) {
	s := start(t, Options{})
	first := postGolden(t, s, "/v1/responses", fixture(t, "codex-0.169.0/responses-tools-1.json"), "openai-function-call.sse")
	postGolden(t, s, "/v1/responses", fixture(t, "codex-0.169.0/responses-tools-2.json"), "openai-function-end.sse")
	ev := sseData(t, first)
	item := ev[len(ev)-2]["item"].(map[string]any)
	if item["type"] != "function_call" || item["name"] != "exec_command" || item["arguments"] != `{"cmd":"echo hi > proof3.txt","yield_time_ms":30000}` {
		t.Errorf("call item %v", item)
	}
	done := ev[len(ev)-1]
	if done["type"] != "response.completed" {
		t.Fatalf("last event %v", done)
	}
	u := done["response"].(map[string]any)["usage"].(map[string]any)
	// 1200 input + 40 cache-write (no such field here) + 300 cached.
	if u["input_tokens"] != 1540.0 || u["output_tokens"] != 60.0 || u["total_tokens"] != 1600.0 ||
		u["input_tokens_details"].(map[string]any)["cached_tokens"] != 300.0 {
		t.Errorf("usage %v", u)
	}
	want := Usage{InputTokens: 2480, OutputTokens: 120, CacheReadTokens: 600}
	if got := s.TotalUsage(); got != want {
		t.Errorf("recorded usage %+v, want %+v", got, want)
	}
	if ex := s.Exchanges(); ex[1].Text != "Done." {
		t.Errorf("final text %q", ex[1].Text)
	}
}

// GitHub Copilot CLI 1.0.102 in BYOK mode with the Responses wire API offers
// its shell as the function "bash" (command, description, mode,
// initial_wait), not Codex's exec_command.
func TestOpenAIAnswersRealCopilotRequests(t *testing.T) {
	s := start(t, Options{})
	first := postGolden(t, s, "/v1/responses", fixture(t, "copilot-1.0.102/responses-1.json"), "openai-copilot-call.sse")
	postGolden(t, s, "/v1/responses", fixture(t, "copilot-1.0.102/responses-2.json"), "openai-copilot-end.sse")
	ev := sseData(t, first)
	item := ev[len(ev)-2]["item"].(map[string]any)
	if item["type"] != "function_call" || item["name"] != "bash" ||
		item["arguments"] != `{"command":"echo hi > proof.txt","description":"Run a command","initial_wait":600,"mode":"sync"}` {
		t.Errorf("call item %v", item)
	}
	ex := s.Exchanges()
	if ex[0].Call == nil || ex[0].Call.Shell != "echo hi > proof.txt" || ex[0].Model != "gpt-5.4" {
		t.Errorf("first exchange %+v", ex[0])
	}
	if ex[1].Call != nil || ex[1].Text != "Done. The command said: <shellId: 0 completed with exit code 0>" {
		t.Errorf("second exchange %+v", ex[1])
	}
}

func TestOpenAIStringInputAndSchemaSideRequest(t *testing.T) {
	s := start(t, Options{})
	_, body := post(t, s, "/v1/responses", mustJSON(map[string]any{"model": "m", "input": "say hi",
		"tools": []any{map[string]any{"type": "function", "name": "exec_command"}}}))
	if !strings.Contains(body, `"text":"`+DefaultReply+`"`) || !strings.Contains(body, `"status":"completed"`) {
		t.Errorf("plain answer %s", body)
	}
	_, body = post(t, s, "/v1/responses", mustJSON(map[string]any{"model": "m", "input": "rate it",
		"text": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{
			"type": "object", "properties": map[string]any{"score": map[string]any{"type": "integer"}}}}}}))
	if !strings.Contains(body, `"text":"{\"score\":1}"`) {
		t.Errorf("schema answer %s", body)
	}
	resp, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/models: %d", resp.StatusCode)
	}
}

// A Stop hook's block reaches Codex's model as an HTML-escaped
// <hook_prompt>; the brain reads the reason and does the next iteration.
func TestOpenAIAnswersCodexStopHookFeedback(t *testing.T) {
	s := start(t, Options{})
	_, stream := post(t, s, "/v1/responses", fixture(t, "codex-0.169.0/responses-stop-feedback.json"))
	ex := s.Exchanges()
	if len(ex) != 1 || ex[0].Call == nil || ex[0].Call.Shell != "echo 2 >> ticks.txt" {
		t.Fatalf("exchanges %+v, want the second iteration's command\n%s", ex, stream)
	}
	if got := unwrapHookPrompt(`<hook_prompt hook_run_id="stop:0">a &lt;b&gt; &amp;amp;</hook_prompt>`); got != "a <b> &amp;" {
		t.Errorf("unwrap = %q", got)
	}
}

// Codex 0.169 offers its subagent tools in the namespace "collaboration":
// spawn_agent returns at once, wait_agent blocks until the subagent is
// done, and the subagent's final answer then reaches the parent as an
// agent message (the shapes as the real Codex sent them). A subagent
// action is the launch, then the wait, and its capture reads the answer;
// the subagent's own task arrives as an agent message too.
func TestOpenAICodexSubagentIsSpawnedThenWaitedFor(t *testing.T) {
	s := start(t, Options{Script: script(t, `
rules:
  - match: "Reply with the probe token"
    actions: [{reply: "PROBE-TOKEN-4711"}]
  - match: "subagent probe"
    actions:
      - subagent: "Reply with the probe token and nothing else."
        capture: {token: 'PROBE-TOKEN-([0-9]+)'}
      - reply: "the subagent said {{.token}}"
`)})
	tools := map[string]any{"type": "additional_tools", "tools": []any{
		map[string]any{"type": "namespace", "name": "functions", "tools": []any{map[string]any{"type": "function", "name": "exec_command"}}},
		map[string]any{"type": "namespace", "name": "collaboration", "tools": []any{
			map[string]any{"type": "function", "name": "spawn_agent"}, map[string]any{"type": "function", "name": "wait_agent"}}}}}
	msg := func(role, text string) map[string]any {
		return map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": "input_text", "text": text}}}
	}
	agentMsg := func(kind, task, payload string) map[string]any {
		return map[string]any{"type": "agent_message", "content": []any{
			map[string]any{"type": "input_text", "text": "Message Type: " + kind + "\nTask name: " + task + "\nSender: /root\nPayload:\n"},
			map[string]any{"type": "encrypted_content", "encrypted_content": payload}}}
	}
	ask := func(input ...any) map[string]any {
		t.Helper()
		status, body := post(t, s, "/v1/responses", mustJSON(map[string]any{"model": "m", "input": append([]any{tools}, input...)}))
		var resp struct {
			Output []map[string]any `json:"output"`
		}
		if err := json.Unmarshal([]byte(body), &resp); status != http.StatusOK || err != nil || len(resp.Output) == 0 {
			t.Fatalf("status %d (%v): %s", status, err, body)
		}
		return resp.Output[len(resp.Output)-1]
	}
	turn := []any{msg("developer", "You are Codex"), msg("user", "subagent probe")}
	spawn := ask(turn...)
	if spawn["type"] != "function_call" || spawn["name"] != "spawn_agent" || spawn["namespace"] != "collaboration" ||
		!strings.Contains(spawn["arguments"].(string), `"message":"Reply with the probe token and nothing else."`) {
		t.Fatalf("launch %v", spawn)
	}
	turn = append(turn, spawn, map[string]any{"type": "function_call_output", "call_id": spawn["call_id"], "output": `{"task_name":"/root/model_sim_subagent"}`})
	wait := ask(turn...)
	if wait["type"] != "function_call" || wait["name"] != "wait_agent" || wait["namespace"] != "collaboration" {
		t.Fatalf("wait %v", wait)
	}
	// The subagent's own conversation: its task is its user turn.
	if got := ask(msg("developer", "You are Codex"), agentMsg("NEW_TASK", "/root/model_sim_subagent", "Reply with the probe token and nothing else.")); got["type"] != "message" ||
		!strings.Contains(string(mustJSON(got["content"])), "PROBE-TOKEN-4711") {
		t.Fatalf("the subagent answered %v", got)
	}
	turn = append(turn, wait, map[string]any{"type": "function_call_output", "call_id": wait["call_id"], "output": `{"message":"Wait completed.","timed_out":false}`},
		agentMsg("FINAL_ANSWER", "/root", "PROBE-TOKEN-4711"))
	if got := ask(turn...); got["type"] != "message" || !strings.Contains(string(mustJSON(got["content"])), "the subagent said 4711") {
		t.Fatalf("the parent's last answer %v", got)
	}
}

// GitHub Copilot CLI 1.0.102 loads a skill with its "skill" tool
// ({"skill": NAME}), which answers "loaded" and hands the skill over as a
// <skill-context> user message right after; the model reads that as the
// call's result, not a new turn. Its "task" tool, told mode "sync",
// returns the subagent's answer (the shapes as the real CLI sent them).
func TestOpenAICopilotLoadsASkillAndRunsASyncTask(t *testing.T) {
	s := start(t, Options{Script: script(t, `
rules:
  - match: "use my-skill"
    actions:
      - skill: my-skill
        capture: {dir: 'Base directory for this skill: (\S+)'}
      - subagent: "Review {{.dir}}"
        capture: {verdict: 'VERDICT-([0-9]+)'}
      - reply: "reviewed {{.verdict}}"
`)})
	tools := []any{map[string]any{"type": "function", "name": "bash"}, map[string]any{"type": "function", "name": "skill"},
		map[string]any{"type": "function", "name": "task"}}
	msg := func(text string) map[string]any {
		return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
	}
	ask := func(input ...any) map[string]any {
		t.Helper()
		status, body := post(t, s, "/v1/responses", mustJSON(map[string]any{"model": "gpt-5.4", "tools": tools, "input": input}))
		var resp struct {
			Output []map[string]any `json:"output"`
		}
		if err := json.Unmarshal([]byte(body), &resp); status != http.StatusOK || err != nil || len(resp.Output) == 0 {
			t.Fatalf("status %d (%v): %s", status, err, body)
		}
		return resp.Output[len(resp.Output)-1]
	}
	turn := []any{msg("<current_datetime>2026-11-29T06:25:51.898+00:00</current_datetime>\n\nuse my-skill")}
	load := ask(turn...)
	if load["name"] != "skill" || load["arguments"] != `{"skill":"my-skill"}` {
		t.Fatalf("load %v", load)
	}
	turn = append(turn, load, map[string]any{"type": "function_call_output", "call_id": load["call_id"],
		"output": `Skill "my-skill" loaded successfully. Follow the instructions in the skill context.`},
		msg("<skill-context name=\"my-skill\">\nBase directory for this skill: /p/.agents/skills/my-skill\n\nDo the thing.\n</skill-context>"))
	task := ask(turn...)
	if task["name"] != "task" || task["arguments"] != `{"agent_type":"general-purpose","description":"model-sim subagent","mode":"sync","name":"model-sim-review","prompt":"Review /p/.agents/skills/my-skill"}` {
		t.Fatalf("the subagent's launch %v", task)
	}
	turn = append(turn, task, map[string]any{"type": "function_call_output", "call_id": task["call_id"], "output": "VERDICT-7"})
	if got := ask(turn...); got["type"] != "message" || !strings.Contains(string(mustJSON(got["content"])), "reviewed 7") {
		t.Fatalf("the last answer %v", got)
	}
}
