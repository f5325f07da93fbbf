package notify

import (
	"encoding/json"
	"mime"
	"strings"
	"testing"

	"github.com/story-automator/story-automator/workflows"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestTheJSONFormatPostsTheEventItself(t *testing.T) {
	ev := LimitWait(testRun, testNow, "1.2", "dev", "claude", "usage_limit", "2026-01-02T18:00:00Z")
	req, err := WebhookRequest(workflows.Webhook{URL: "http://127.0.0.1:8080/hook", Format: workflows.WebhookJSON}, ev, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(req.Body), &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"event": "limit_wait", "runId": testRun.ID, "project": testRun.Project, "story": "1.2",
		"step": "dev", "agent": "claude", "reason": "usage_limit", "resetsAt": "2026-01-02T18:00:00Z", "at": "2026-01-02T15:04:05Z"} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	if !strings.Contains(got["message"].(string), "at 18:00 UTC") || !strings.Contains(got["command"].(string), "status") {
		t.Errorf("message %q command %q", got["message"], got["command"])
	}
	if req.Headers["Content-Type"] != "application/json" || req.URL != "http://127.0.0.1:8080/hook" {
		t.Errorf("request %+v", req)
	}
}

func TestTheNtfyFormatPublishesTheMessageWithTitlePriorityAndTags(t *testing.T) {
	ev := Dialog(testRun, testNow, "1.1", "dev", "dev story of 1.1: the claude agent waits at its trust dialog", "answer it")
	req, err := WebhookRequest(workflows.Webhook{URL: "https://ntfy.example/$TOPIC", Format: workflows.WebhookNtfy,
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}, ev, env(map[string]string{"TOPIC": "t1", "TOKEN": "tk_1"}))
	if err != nil {
		t.Fatal(err)
	}
	if req.URL != "https://ntfy.example/t1" || req.Body != ev.Message || req.Headers["Priority"] != "high" ||
		req.Headers["Tags"] != "raising_hand,story-automator" || req.Headers["Authorization"] != "Bearer tk_1" ||
		!strings.HasPrefix(req.Headers["Content-Type"], "text/plain") {
		t.Fatalf("request %+v", req)
	}
	if title, err := new(mime.WordDecoder).DecodeHeader(req.Headers["Title"]); err != nil || title != ev.Title {
		t.Fatalf("title header %q reads %q (%v), want %q", req.Headers["Title"], title, err, ev.Title)
	}
	// A title outside ASCII is RFC 2047-encoded, which ntfy reads.
	ev.Title = "story-automator: café done"
	req, _ = WebhookRequest(workflows.Webhook{URL: "https://ntfy.example/t", Format: workflows.WebhookNtfy}, ev, env(nil))
	if !strings.HasPrefix(req.Headers["Title"], "=?UTF-8?b?") {
		t.Fatalf("title header %q", req.Headers["Title"])
	}
}

func TestTheSlackFormatPostsTextOnly(t *testing.T) {
	ev := Done(testRun, testNow, 4)
	req, err := WebhookRequest(workflows.Webhook{URL: "https://hooks.example/services/T/B/x", Format: workflows.WebhookSlack}, ev, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(req.Body), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["text"] != "*"+ev.Title+"*\n"+ev.Message || req.Headers["Content-Type"] != "application/json" {
		t.Fatalf("body %s headers %v", req.Body, req.Headers)
	}
	if !strings.Contains(ev.Message, "4 stories done") || !strings.Contains(ev.Message, "runs show "+testRun.ID) {
		t.Fatalf("message %q", ev.Message)
	}
}

func TestAWebhookURLThatIsNoURLOnceExpandedIsRefused(t *testing.T) {
	_, err := WebhookRequest(workflows.Webhook{URL: "$UNSET_HOOK", Format: workflows.WebhookJSON}, Test(testRun, testNow), env(nil))
	if err == nil || !strings.Contains(err.Error(), "$UNSET_HOOK") {
		t.Fatalf("err %v", err)
	}
	// A secret in the expanded URL (its path, its user) is never in the message.
	_, err = WebhookRequest(workflows.Webhook{URL: "ftp://me:pw-secret@hooks.example/$HOOK", Format: workflows.WebhookJSON},
		Test(testRun, testNow), env(map[string]string{"HOOK": "topic-secret"}))
	if err == nil || !strings.Contains(err.Error(), "ftp://hooks.example/…") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err %v", err)
	}
}

func TestTheCommandToRunNextNamesTheProject(t *testing.T) {
	ev := Escalated(testRun, testNow, "1.2", "review", "review story of 1.2: 5 cycles", "read the notes")
	if ev.Command != "story-automator --project-root '/home/me/my project' run --resume" || !ev.Urgent() {
		t.Fatalf("command %q", ev.Command)
	}
	if !strings.HasSuffix(ev.Message, "\n"+ev.Command) || !strings.Contains(ev.Message, "read the notes") {
		t.Fatalf("message %q", ev.Message)
	}
}
