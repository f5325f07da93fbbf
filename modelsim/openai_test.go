package modelsim

import (
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
