package modelsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// postFull posts body and returns the status, the headers and the body.
func postFull(t *testing.T, s *Server, path string, body []byte) (int, http.Header, string, error) {
	t.Helper()
	resp, err := http.Post(s.URL()+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

const (
	antTurn = `{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`
	oaiTurn = `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"tools":[{"type":"function","name":"shell"}]}`
	gemTurn = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`
)

// A usage limit answers the first requests, then refuses every one in each
// protocol's own shape with the reset time the script gave, until it lifts.
func TestAScriptedUsageLimitRefusesWithItsResetTimeUntilItLifts(t *testing.T) {
	s := start(t, Options{Script: script(t, "limit: {after: 1, for: 2s, kind: usage}")})
	if status, _, body, err := postFull(t, s, "/v1/messages", []byte(antTurn)); err != nil || status != 200 {
		t.Fatalf("first request: %d %s %v", status, body, err)
	}
	began := time.Now()
	status, h, body, err := postFull(t, s, "/v1/messages", []byte(antTurn))
	if err != nil || status != 429 || h.Get("anthropic-ratelimit-unified-status") != "rejected" ||
		h.Get("anthropic-ratelimit-unified-representative-claim") != "five_hour" || !strings.Contains(body, "rate_limit_error") {
		t.Fatalf("anthropic: %d %v %s %v", status, h, body, err)
	}
	reset, _ := strconv.ParseInt(h.Get("anthropic-ratelimit-unified-reset"), 10, 64)
	if d := time.Unix(reset, 0).Sub(began); d < 0 || d > 3*time.Second {
		t.Errorf("reset %d is %s after the limit began", reset, d)
	}
	status, h, body, _ = postFull(t, s, "/v1/responses", []byte(oaiTurn))
	var oai struct {
		Error struct {
			Type     string `json:"type"`
			ResetsAt int64  `json:"resets_at"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &oai)
	if status != 429 || oai.Error.Type != "usage_limit_reached" || oai.Error.ResetsAt != reset ||
		h.Get("x-codex-primary-reset-at") != strconv.FormatInt(reset, 10) {
		t.Errorf("openai: %d %v %s", status, h, body)
	}
	status, _, body, _ = postFull(t, s, "/v1beta/models/g:generateContent", []byte(gemTurn))
	if status != 429 || !strings.Contains(body, "RESOURCE_EXHAUSTED") || !strings.Contains(body, "PerHour") || !strings.Contains(body, "RetryInfo") {
		t.Errorf("gemini: %d %s", status, body)
	}
	for {
		ex := s.Exchanges()
		if ex[len(ex)-1].Status == 200 {
			break
		}
		if time.Since(began) > 10*time.Second {
			t.Fatalf("the limit never lifted: %+v", ex[len(ex)-1])
		}
		time.Sleep(200 * time.Millisecond) // polling a clock-driven limit, not synchronising
		if _, _, _, err := postFull(t, s, "/v1/messages", []byte(antTurn)); err != nil {
			t.Fatal(err)
		}
	}
	if ex := s.Exchanges(); ex[1].Limit != LimitUsage {
		t.Errorf("exchange 2 does not name its limit: %+v", ex[1])
	}
}

// A rate limit carries retry-after unless the script says noReset;
// overloaded is Anthropic's 529; a dropped stream ends without an answer.
func TestScriptedRateLimitOverloadAndDrop(t *testing.T) {
	cases := []struct {
		script, path, body string
		status             int
		header, want       string
	}{
		{"limit: {for: 1m, kind: rate}", "/v1/messages", antTurn, 429, "retry-after", "rate_limit_error"},
		{"limit: {for: 1m, kind: rate, noReset: true}", "/v1/messages", antTurn, 429, "", "rate_limit_error"},
		{"limit: {for: 1m, kind: rate}", "/v1/responses", oaiTurn, 429, "retry-after", "rate_limit_exceeded"},
		{"limit: {for: 1m, kind: rate}", "/v1beta/models/g:generateContent", gemTurn, 429, "", "PerMinute"},
		{"limit: {for: 1m, kind: overloaded}", "/v1/messages", antTurn, 529, "", "overloaded_error"},
		{"limit: {for: 1m, kind: overloaded}", "/v1beta/models/g:generateContent", gemTurn, 503, "", "UNAVAILABLE"},
		{"limit: {for: 1m, kind: error}", "/v1/responses", oaiTurn, 500, "", "server_error"},
	}
	for _, c := range cases {
		s := start(t, Options{Script: script(t, c.script)})
		status, h, body, err := postFull(t, s, c.path, []byte(c.body))
		if err != nil || status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s %v", c.script, c.path, status, body, err)
		}
		if got := h.Get("retry-after"); (c.header != "") != (got != "") {
			t.Errorf("%s %s: retry-after %q", c.script, c.path, got)
		}
	}
	s := start(t, Options{Script: script(t, "limit: {for: 1m, kind: drop}")})
	if _, _, body, err := postFull(t, s, "/v1/messages", []byte(antTurn)); err == nil && strings.Contains(body, "message_stop") {
		t.Errorf("a dropped stream ended: %q", body)
	}
}

func TestALimitOfUnknownKindIsRefused(t *testing.T) {
	for _, bad := range []string{"limit: {for: 1m, kind: nope}", "limit: {kind: usage}", "limit: {for: 1m, kind: usage, window: month}"} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// A limit that began within a second lifts at the whole second its reset
// headers name, not before and not after.
func TestAScriptedLimitLiftsAtTheWholeSecondItNames(t *testing.T) {
	var c limitClock
	l := &Limit{For: time.Minute, Kind: LimitUsage}
	t0 := time.Date(2026, 11, 27, 16, 0, 0, 300_000_000, time.UTC)
	reset, on := c.refuse(l, false, t0)
	if !on || !reset.Equal(time.Unix(reset.Unix(), 0)) || reset.Before(t0.Add(time.Minute)) {
		t.Fatalf("refused %v until %s, want a whole second a minute on", on, reset)
	}
	if _, on := c.refuse(l, false, time.Unix(reset.Unix(), 0)); on {
		t.Fatal("a request at the second the headers named was refused")
	}
}
