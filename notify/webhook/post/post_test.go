package post

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/notify/webhook"
)

func TestRunPostsTheBodyAndHeadersAndRepliesOK(t *testing.T) {
	var gotBody, gotTitle, gotType, gotMethod string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotTitle, gotType, gotMethod = string(b), r.Header.Get("Title"), r.Header.Get("Content-Type"), r.Method
	}))
	defer srv.Close()
	req, _ := json.Marshal(webhook.Request{URL: srv.URL + "/topic", Body: "run done",
		Headers: map[string]string{"Title": "story-automator", "Content-Type": "text/plain; charset=utf-8"}, TimeoutMs: 5000})
	var out, errOut bytes.Buffer
	if code := Run(bytes.NewReader(req), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
	}
	var rep webhook.Reply
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || !rep.OK || rep.Status != 200 {
		t.Fatalf("reply %q: %v", out.String(), err)
	}
	if gotMethod != http.MethodPost || gotBody != "run done" || gotTitle != "story-automator" || !strings.HasPrefix(gotType, "text/plain") {
		t.Fatalf("server saw %s %q title %q type %q", gotMethod, gotBody, gotTitle, gotType)
	}
}

func TestRunReportsAnErrorStatusWithTheServersWords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "topic\nis full", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	req, _ := json.Marshal(webhook.Request{URL: srv.URL, Body: "{}"})
	var out bytes.Buffer
	if code := Run(bytes.NewReader(req), &out, io.Discard); code != 1 {
		t.Fatalf("exit %d", code)
	}
	var rep webhook.Reply
	_ = json.Unmarshal(out.Bytes(), &rep)
	if rep.OK || rep.Status != 429 || rep.Error != "HTTP 429 Too Many Requests: topic is full" {
		t.Fatalf("reply %+v", rep)
	}
}

func TestRunRefusesAnUnreadableRequest(t *testing.T) {
	var errOut bytes.Buffer
	if code := Run(strings.NewReader("not json"), io.Discard, &errOut); code != 2 || !strings.Contains(errOut.String(), "stdin") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

func TestSendGivesUpAtItsTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	rep := Send(t.Context(), srv.Client(), webhook.Request{URL: srv.URL, TimeoutMs: 50})
	if rep.OK || !strings.Contains(rep.Error, "no answer within 50ms") {
		t.Fatalf("reply %+v", rep)
	}
}

func TestAnUnreachableServerIsReportedWithoutTheURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/services/T0/B0/secret"
	srv.Close()
	rep := Send(t.Context(), http.DefaultClient, webhook.Request{URL: url, TimeoutMs: 5000})
	if rep.OK || rep.Error == "" || strings.Contains(rep.Error, "secret") {
		t.Fatalf("reply %+v", rep)
	}
}
