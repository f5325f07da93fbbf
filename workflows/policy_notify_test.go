package workflows

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPolicyReadsNotifySinks(t *testing.T) {
	p, err := ParsePolicy("w.yaml", []byte(`
notify:
  desktop: true
  command: "cat > /tmp/ev.json"
  webhook: https://ntfy.example/topic
  format: ntfy
  headers: {Authorization: "Bearer $TOKEN"}
  events: [done, limit_wait]
  timeout: 5s
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Notify{Desktop: true, Command: "cat > /tmp/ev.json", Events: []string{"done", "limit_wait"}, Timeout: 5 * time.Second,
		Webhooks: []Webhook{{URL: "https://ntfy.example/topic", Format: WebhookNtfy, Headers: map[string]string{"Authorization": "Bearer $TOKEN"}}}}
	if !reflect.DeepEqual(p.Notify, want) {
		t.Fatalf("notify %+v\nwant   %+v", p.Notify, want)
	}
	if !p.Notify.Configured() || !p.Notify.Wants("done") || p.Notify.Wants("escalated") {
		t.Fatalf("Configured/Wants wrong for %+v", p.Notify)
	}
	if d := DefaultPolicy(); d.Notify.Configured() || !d.Notify.Wants("dialog") {
		t.Fatalf("the defaults notify: %+v", d.Notify)
	}
}

func TestPolicyReadsAListOfWebhooksWithDefaults(t *testing.T) {
	p, err := ParsePolicy("w.yaml", []byte(`
notify:
  format: slack
  webhook:
    - url: https://hooks.example/a
    - {url: "http://127.0.0.1:9/b", format: json, headers: {X-Key: k}}
    - url: $HOOK_URL
`))
	if err != nil {
		t.Fatal(err)
	}
	got := p.Notify.Webhooks
	if len(got) != 3 || got[0].Format != WebhookSlack || got[1].Format != WebhookJSON || got[1].Headers["X-Key"] != "k" ||
		got[2].URL != "$HOOK_URL" {
		t.Fatalf("webhooks %+v", got)
	}
}

// A mistyped webhook URL's error shows its scheme and host only: its path,
// user and query may be the secret.
func TestAWebhookURLErrorShowsNoSecret(t *testing.T) {
	for doc, want := range map[string]string{
		"notify: {webhook: 'htps://hooks.slack.com/services/T0/B0/sekrit'}": "got htps://hooks.slack.com/…",
		"notify: {webhook: 'ntfy.sh/sekrit-topic'}":                         "got text that is not a URL",
		"notify: {webhook: [{url: 'ftp://user:sekrit@x.org/a?k=sekrit'}]}":  "got ftp://x.org/…",
		"notify: {webhook: 'mailto:sekrit@example.com'}":                    "got mailto:… (no host)",
	} {
		_, err := ParsePolicy("w.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "sekrit") {
			t.Errorf("%s: %v, want %q and no secret", doc, err, want)
		}
	}
}

func TestPolicyRefusesBadNotifyKeys(t *testing.T) {
	for doc, want := range map[string]string{
		"notify: {desktop: yes please}":                                  "notify.desktop",
		"notify: {webhook: ftp://x/y}":                                   "notify.webhook",
		"notify: {webhook: not a url}":                                   "notify.webhook",
		"notify: {webhook: https://x/y, format: xml}":                    "notify.format",
		"notify: {events: [done, lunch]}":                                "notify.events",
		"notify: {timeout: soon}":                                        "notify.timeout",
		"notify: {email: me@example.com}":                                "notify.email",
		"notify: {webhook: [{format: json}]}":                            "notify.webhook[0]",
		"notify: {webhook: [{url: https://x, to: y}]}":                   "notify.webhook[0].to",
		"notify: {webhook: {url: https://x}}":                            "notify.webhook",
		"notify: {desktop: true, headers: {Authorization: 'Bearer $T'}}": "notify.headers: applies to webhooks, and notify sets none",
		"notify: {command: x, format: ntfy}":                             "notify.format: applies to webhooks",
		"notify: {webhook: null, headers: {X: y}}":                       "notify.headers: applies to webhooks",
	} {
		_, err := ParsePolicy("w.yaml", []byte(doc))
		if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", doc, err, want)
		}
	}
}
