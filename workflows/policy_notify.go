package workflows

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Notify is workflow.yaml's `notify`: where a run's notifications go. Every
// sink set receives every event kind Events allows.
type Notify struct {
	// Desktop shows a desktop notification (notify-send on Linux, osascript
	// on macOS).
	Desktop bool
	// Command is a shell command (sh -c, in the project root) that gets the
	// event as JSON on stdin.
	Command string
	// Webhooks each get an HTTP POST of the event.
	Webhooks []Webhook
	// Events are the kinds to send (NotifyEvents); empty means all.
	Events []string
	// Timeout bounds one try of one sink; 0 is the notifier's default.
	Timeout time.Duration
}

// Webhook is one URL the event is POSTed to, in one of WebhookFormats.
type Webhook struct {
	// URL and the Headers' values may name environment variables ($VAR or
	// ${VAR}), expanded when the event is sent, so secrets stay out of the file.
	URL     string
	Format  string
	Headers map[string]string
}

// Webhook formats: the event as JSON, ntfy's publish shape, Slack's
// incoming-webhook shape.
const (
	WebhookJSON  = "json"
	WebhookNtfy  = "ntfy"
	WebhookSlack = "slack"
)

// WebhookFormats lists the `format` values.
func WebhookFormats() []string { return []string{WebhookJSON, WebhookNtfy, WebhookSlack} }

// NotifyEvents lists the event kinds a run notifies about (`notify.events`).
func NotifyEvents() []string {
	return []string{"done", "escalated", "parked", "dialog", "budget_paused", "limit_wait", "limit_resumed"}
}

// Configured reports whether any sink is set.
func (n Notify) Configured() bool {
	return n.Desktop || strings.TrimSpace(n.Command) != "" || len(n.Webhooks) > 0
}

// Wants reports whether events of kind are sent.
func (n Notify) Wants(kind string) bool {
	return len(n.Events) == 0 || slices.Contains(n.Events, kind)
}

const notifyKeys = "desktop, command, webhook, format, headers, events, timeout"

// notify reads `notify:`. `webhook` is one URL (with `format` and `headers`
// beside it) or a list of {url, format, headers}, which take `format` and
// `headers` as their defaults.
func (r *policyReader) notify(p *Policy, n *yaml.Node, path string) {
	var nt Notify
	var hook, formatKey, headersKey *yaml.Node
	format, headers := WebhookJSON, map[string]string(nil)
	if isNull(n) {
		p.Notify = nt
		return
	}
	for _, kv := range r.entries(n, path) {
		key, val := kv[0].Value, kv[1]
		at := path + "." + key
		switch key {
		case "desktop":
			r.boolean(val, at, &nt.Desktop)
		case "command":
			r.str(val, at, &nt.Command)
		case "webhook":
			hook = val
		case "format":
			formatKey = kv[0]
			r.webhookFormat(val, at, &format)
		case "headers":
			headersKey = kv[0]
			headers = r.headers(val, at)
		case "events":
			r.notifyEvents(val, at, &nt.Events)
		case "timeout":
			r.duration(val, at, &nt.Timeout, false)
		default:
			r.fail(kv[0], at, "unknown key (keys: %s)", notifyKeys)
		}
	}
	if hook != nil {
		nt.Webhooks = r.webhooks(hook, path+".webhook", format, headers)
	}
	if hook == nil || isNull(hook) {
		// They would be dropped silently: a token meant for a webhook that is not there.
		for _, k := range []*yaml.Node{formatKey, headersKey} {
			if k != nil {
				r.fail(k, path+"."+k.Value, "applies to webhooks, and notify sets none: add webhook: URL, or remove %s", k.Value)
			}
		}
	}
	p.Notify = nt
}

func (r *policyReader) webhooks(n *yaml.Node, at, format string, headers map[string]string) []Webhook {
	switch {
	case isNull(n):
		return nil
	case n.Kind == yaml.ScalarNode:
		w := Webhook{URL: n.Value, Format: format, Headers: headers}
		r.webhookURL(n, at, w.URL)
		return []Webhook{w}
	case n.Kind != yaml.SequenceNode:
		r.fail(n, at, "must be a URL or a list of {url, format, headers}")
		return nil
	}
	var out []Webhook
	for i, item := range n.Content {
		iat := fmt.Sprintf("%s[%d]", at, i)
		w := Webhook{Format: format, Headers: headers}
		for _, kv := range r.entries(item, iat) {
			switch key, val := kv[0].Value, kv[1]; key {
			case "url":
				if r.scalar(val, iat+".url", "a URL") {
					w.URL = val.Value
					r.webhookURL(val, iat+".url", w.URL)
				}
			case "format":
				r.webhookFormat(val, iat+".format", &w.Format)
			case "headers":
				w.Headers = r.headers(val, iat+".headers")
			default:
				r.fail(kv[0], iat+"."+key, "unknown key (keys: url, format, headers)")
			}
		}
		if w.URL == "" && item.Kind == yaml.MappingNode {
			r.fail(item, iat, "needs a url")
		}
		out = append(out, w)
	}
	return out
}

// webhookURL checks an http(s) URL; one that names an environment variable
// is checked when it is sent.
func (r *policyReader) webhookURL(n *yaml.Node, at, raw string) {
	if strings.Contains(raw, "$") {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		r.fail(n, at, "must be an http:// or https:// URL, got %s", ShowURL(raw))
	}
}

// ShowURL is a URL as a message may show it: its scheme and host only,
// never its user, path, query or fragment, which may hold a secret (a
// webhook's token, a topic); text that is no URL is not shown at all.
func ShowURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil || u.Scheme == "":
		return "text that is not a URL (not shown: it may hold a secret)"
	case u.Host == "":
		return u.Scheme + ":… (no host)"
	}
	out := u.Scheme + "://" + u.Host
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		out += "/…"
	}
	return out
}

func (r *policyReader) webhookFormat(n *yaml.Node, at string, dst *string) {
	var f string
	if !r.str(n, at, &f) {
		return
	}
	if !slices.Contains(WebhookFormats(), f) {
		r.fail(n, at, "must be one of %s, got %q", strings.Join(WebhookFormats(), ", "), f)
		return
	}
	*dst = f
}

func (r *policyReader) headers(n *yaml.Node, at string) map[string]string {
	if isNull(n) {
		return nil
	}
	out := map[string]string{}
	for _, kv := range r.entries(n, at) {
		if r.scalar(kv[1], at+"."+kv[0].Value, "a header value") {
			out[kv[0].Value] = kv[1].Value
		}
	}
	return out
}

func (r *policyReader) notifyEvents(n *yaml.Node, at string, dst *[]string) {
	if n.Kind != yaml.SequenceNode {
		r.fail(n, at, "must be a list of event kinds (%s)", strings.Join(NotifyEvents(), ", "))
		return
	}
	var kinds []string
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || !slices.Contains(NotifyEvents(), c.Value) {
			r.fail(c, at, "unknown event kind %q (kinds: %s)", c.Value, strings.Join(NotifyEvents(), ", "))
			return
		}
		kinds = append(kinds, c.Value)
	}
	*dst = kinds
}
