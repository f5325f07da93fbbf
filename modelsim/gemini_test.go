package modelsim

import (
	"encoding/json"
	"strings"
	"testing"
)

// geminiFixture is a request Gemini CLI 0.61.0 sent: its path and body.
func geminiFixture(t *testing.T, name string) (string, []byte) {
	t.Helper()
	var f struct {
		Path string          `json:"path"`
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(fixture(t, "gemini-0.61.0/"+name), &f); err != nil {
		t.Fatal(err)
	}
	return f.Path, f.Body
}

// The three requests of `gemini --yolo -p 'Please run `echo hello >
// proof.txt` now.'`: the complexity score, the prompt, the shell's result.
func TestGeminiAnswersRealGeminiCLIRequests(t *testing.T) {
	s := start(t, Options{})
	path, body := geminiFixture(t, "generate-content-1.json")
	side := postGolden(t, s, path, body, "gemini-complexity.json")
	path, body = geminiFixture(t, "stream-1.json")
	first := postGolden(t, s, path, body, "gemini-function-call.sse")
	path, body = geminiFixture(t, "stream-2.json")
	postGolden(t, s, path, body, "gemini-end.sse")

	var score struct {
		Candidates []struct {
			Content struct {
				Parts []struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(side), &score); err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Score int `json:"complexity_score"`
	}
	if err := json.Unmarshal([]byte(score.Candidates[0].Content.Parts[0].Text), &answer); err != nil || answer.Score < 1 {
		t.Errorf("complexity answer %s (%v): want a score ≥ 1", side, err)
	}
	ev := sseData(t, first)
	part := ev[0]["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	call, _ := part["functionCall"].(map[string]any)
	if call["name"] != "run_shell_command" || call["args"].(map[string]any)["command"] != "echo hello > proof.txt" {
		t.Errorf("part %v, want run_shell_command", part)
	}
	u := ev[0]["usageMetadata"].(map[string]any)
	if u["promptTokenCount"] != 1540.0 || u["cachedContentTokenCount"] != 300.0 || u["candidatesTokenCount"] != 60.0 || u["totalTokenCount"] != 1600.0 {
		t.Errorf("usage %v", u)
	}
	ex := s.Exchanges()
	if !ex[0].Side || ex[1].Side || ex[2].Text != "Done." {
		t.Errorf("exchanges %+v", ex)
	}
	want := Usage{InputTokens: 3 * 1240, OutputTokens: 3 * 60, CacheReadTokens: 3 * 300}
	if got := s.TotalUsage(); got != want {
		t.Errorf("recorded usage %+v, want %+v", got, want)
	}
}

func TestGeminiCountTokensAndUnknownMethods(t *testing.T) {
	s := start(t, Options{})
	status, body := post(t, s, "/v1beta/models/m:countTokens", []byte(`{"contents":[]}`))
	if status != 200 || !strings.Contains(body, `"totalTokens":`) {
		t.Errorf("countTokens %d %s", status, body)
	}
	if status, body := post(t, s, "/v1beta/models/m:embedContent", []byte(`{}`)); status != 404 || !strings.Contains(body, "NOT_FOUND") {
		t.Errorf("unknown method %d %s", status, body)
	}
}

func TestGeminiWritesThroughWriteFile(t *testing.T) {
	s := start(t, Options{Script: script(t, `rules: [{actions: [{write: {path: a.txt, content: x}}]}]`)})
	_, body := post(t, s, "/v1beta/models/m:generateContent", mustJSON(map[string]any{
		"tools":    []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "write_file"}, map[string]any{"name": "run_shell_command"}}}},
		"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}}}))
	if !strings.Contains(body, `"functionCall":{"args":{"content":"x","file_path":"a.txt"},"name":"write_file"}`) {
		t.Errorf("answer %s", body)
	}
}

// An AfterAgent hook's block reaches Gemini's model as a plain user turn
// holding the reason.
func TestGeminiAnswersAfterAgentBlock(t *testing.T) {
	s := start(t, Options{})
	path, body := geminiFixture(t, "stream-after-agent-block.json")
	post(t, s, path, body)
	if ex := s.Exchanges(); len(ex) != 1 || ex[0].Call == nil || ex[0].Call.Shell != "echo 2 >> ticks.txt" {
		t.Fatalf("exchanges %+v, want the second iteration's command", ex)
	}
}

func TestGeminiActivatesASkillThroughActivateSkill(t *testing.T) {
	s := start(t, Options{Script: script(t, `rules: [{actions: [{skill: my-skill}]}]`)})
	_, body := post(t, s, "/v1beta/models/m:generateContent", mustJSON(map[string]any{
		"tools":    []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "activate_skill"}, map[string]any{"name": "run_shell_command"}}}},
		"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}}}))
	if !strings.Contains(body, `"functionCall":{"args":{"name":"my-skill"},"name":"activate_skill"}`) {
		t.Errorf("answer %s", body)
	}
}

func TestGeminiLaunchesASubagentThroughInvokeAgent(t *testing.T) {
	s := start(t, Options{Script: script(t, `rules: [{actions: [{subagent: "look"}]}]`)})
	_, body := post(t, s, "/v1beta/models/m:generateContent", mustJSON(map[string]any{
		"tools":    []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "invoke_agent"}, map[string]any{"name": "run_shell_command"}}}},
		"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}}}))
	if !strings.Contains(body, `"functionCall":{"args":{"agent_name":"generalist","prompt":"look"},"name":"invoke_agent"}`) {
		t.Errorf("answer %s", body)
	}
}

// A Gemini CLI subagent (its tools include complete_task) ends its turn by
// handing the final text to complete_task, as the generalist's output.
func TestGeminiSubagentAnswersThroughCompleteTask(t *testing.T) {
	s := start(t, Options{Script: script(t, `rules: [{actions: [{reply: "TOKEN-1"}]}]`)})
	_, body := post(t, s, "/v1beta/models/m:generateContent", mustJSON(map[string]any{
		"tools":    []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "complete_task"}, map[string]any{"name": "run_shell_command"}}}},
		"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}}}))
	if !strings.Contains(body, `"functionCall":{"args":{"result":{"response":"TOKEN-1"}},"name":"complete_task"}`) {
		t.Errorf("answer %s", body)
	}
}
