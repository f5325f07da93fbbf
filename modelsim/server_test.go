package modelsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:80", "example.com:80"} {
		if _, err := Start(Options{Listen: addr}); !errors.Is(err, ErrNotLoopback) {
			t.Errorf("Start(%q) = %v, want ErrNotLoopback", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		s, err := Start(Options{Listen: addr})
		if err != nil {
			t.Errorf("Start(%q): %v", addr, err)
			continue
		}
		if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
			t.Errorf("URL %s", s.URL())
		}
		s.Close()
	}
}

func TestAHangingAnswerEndsWhenTheServerCloses(t *testing.T) {
	s := start(t, Options{Script: script(t, "rules: [{actions: [{fault: hang}]}]")})
	changed := s.Changed()
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(s.URL()+"/v1/messages", "application/json",
			strings.NewReader(`{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-changed
	if ex := s.Exchanges(); len(ex) != 1 || !ex[0].Hang || ex[0].Usage != (Usage{}) {
		t.Fatalf("exchanges %+v, want one hang without usage", ex)
	}
	s.Close()
	if err := <-done; err == nil {
		t.Error("the hanging request got an answer")
	}
}

func TestScriptedErrorAndUnknownPaths(t *testing.T) {
	s := start(t, Options{Script: script(t, "rules: [{actions: [{fault: error}]}]")})
	status, body := post(t, s, "/v1/messages", []byte(`{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"hi"}]}`))
	if status != 500 || !strings.Contains(body, `"type":"api_error"`) {
		t.Errorf("error answer %d %s", status, body)
	}
	if status, _ := post(t, s, "/nope", nil); status != 404 {
		t.Errorf("unknown path: %d", status)
	}
	if ex := s.Exchanges(); len(ex) != 2 || ex[0].Status != 500 || ex[1].Status != 404 {
		t.Errorf("exchanges %+v", ex)
	}
}

func TestRecordFileGetsOneLinePerExchange(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	s := start(t, Options{RecordFile: rec})
	post(t, s, "/v1/messages", []byte(`{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"run `+"`true`"+`"}]}`))
	post(t, s, "/v1beta/models/g:generateContent", []byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
	s.Close()
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), data)
	}
	var first Exchange
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Call == nil || first.Call.Shell != "true" ||
		first.Usage != DefaultUsage || !strings.Contains(string(first.Request), `"model":"m"`) {
		t.Errorf("first line %s (%v)", lines[0], err)
	}
}

// net/http bounds a request's head (1 MiB): a bigger one is refused before
// it reaches model-sim, and nothing is recorded.
func TestAnOversizedRequestHeadIsRefused(t *testing.T) {
	s := start(t, Options{})
	req, err := http.NewRequest("GET", s.URL()+"/v1/models", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("a", 1<<20+8<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d, want 431", resp.StatusCode)
	}
	if ex := s.Exchanges(); len(ex) != 0 {
		t.Errorf("exchanges %+v, want none", ex)
	}
}

// A streamed answer goes out event by event: the handler flushes through
// net/http's Flusher.
func TestAStreamedAnswerIsFlushedAsServerSentEvents(t *testing.T) {
	s := &Server{brain: &Brain{}, closing: make(chan struct{}), changed: make(chan struct{})}
	w := httptest.NewRecorder()
	s.route(w, httptest.NewRequest("POST", "/v1/messages",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)))
	if !w.Flushed || w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("flushed %v, status %d, type %q", w.Flushed, w.Code, w.Header().Get("Content-Type"))
	}
	if body := w.Body.String(); !strings.HasPrefix(body, "event: message_start\n") || !strings.Contains(body, "event: message_stop\n") {
		t.Errorf("stream %s", body)
	}
}
