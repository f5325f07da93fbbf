package notify

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"os"
	"strings"

	"github.com/story-automator/story-automator/workflows"
)

// WebhookRequest is the POST that delivers ev to w, in w's format, with w's
// URL and header values expanded from getenv.
func WebhookRequest(w workflows.Webhook, ev Event, getenv func(string) string) (Request, error) {
	req := Request{URL: os.Expand(w.URL, getenv), Headers: map[string]string{}}
	switch w.Format {
	case workflows.WebhookNtfy:
		ntfy(&req, ev)
	case workflows.WebhookSlack:
		body, err := json.Marshal(map[string]string{"text": "*" + ev.Title + "*\n" + ev.Message})
		if err != nil {
			return req, fmt.Errorf("encode the slack message: %w", err)
		}
		req.Body, req.Headers["Content-Type"] = string(body), "application/json"
	default:
		body, err := json.Marshal(ev)
		if err != nil {
			return req, fmt.Errorf("encode the event: %w", err)
		}
		req.Body, req.Headers["Content-Type"] = string(body), "application/json"
	}
	for k, v := range w.Headers {
		req.Headers[k] = os.Expand(v, getenv)
	}
	if u, err := url.Parse(req.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return req, fmt.Errorf("the webhook URL that names $%s is not an http:// or https:// URL once they are expanded (got %s)",
			strings.Join(workflows.VarsIn(w.URL), ", $"), workflows.ShowURL(req.URL))
	}
	return req, nil
}

// ntfy publishes to the topic the URL names: the message as the body, the
// title, priority and tags in headers (a title outside ASCII RFC 2047-encoded,
// which ntfy reads).
func ntfy(req *Request, ev Event) {
	prio, tags := ntfyLook(ev.Kind)
	req.Body = ev.Message
	req.Headers["Content-Type"] = "text/plain; charset=utf-8"
	req.Headers["Title"] = mime.BEncoding.Encode("UTF-8", ev.Title)
	req.Headers["Priority"] = prio
	req.Headers["Tags"] = tags
}

// ntfyLook is an event kind's ntfy priority and tags (tags that name an
// emoji show as one).
func ntfyLook(kind string) (priority, tags string) {
	switch kind {
	case KindDone:
		return "default", "white_check_mark,story-automator"
	case KindEscalated:
		return "high", "warning,story-automator"
	case KindDialog:
		return "high", "raising_hand,story-automator"
	case KindParked:
		return "high", "parking,story-automator"
	case KindBudgetPaused:
		return "high", "money_with_wings,story-automator"
	case KindLimitWait:
		return "default", "hourglass_flowing_sand,story-automator"
	case KindLimitResumed:
		return "low", "arrow_forward,story-automator"
	}
	return "default", "bell,story-automator"
}
